import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { StackOutputs } from '../../lambdas/config/stack-outputs.js';
import { openApiDocument } from '../../lambdas/core/openapi/document.js';
import { gatewayRequestModels } from '../../lambdas/core/openapi/gateway-models.js';
import { documentTemplate } from '../../lib/constructs/openapi-route.js';
import { BAD_REQUEST_BODY_TEMPLATE } from '../../lib/constructs/request-validation.js';
import { logicalIdOf, resourceById, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const methods = stack.httpApi.methods;
const models = stack.requestValidation.models;
const validatorRef = { Ref: logicalIdOf(stack.requestValidation.validator) };
const openApiMethod = resourceById(template, logicalIdOf(stack.openApi.method));
const expectedModels = gatewayRequestModels();

describe('request validation at the gateway (integrator routes)', () => {
  it('validates request bodies, not parameters', () => {
    template.hasResourceProperties('AWS::ApiGateway::RequestValidator', {
      ValidateRequestBody: true,
      ValidateRequestParameters: false,
    });
  });

  it.each(['submitTask', 'submitBatch'] as const)('%s uses the body validator', (routeId) => {
    expect(resourceById(template, logicalIdOf(methods[routeId])).Properties?.['RequestValidatorId']).toEqual(
      validatorRef,
    );
  });

  it.each(['submitTask', 'submitBatch'] as const)('%s has its model for application/json', (routeId) => {
    const model = models[routeId];
    if (!model) throw new Error(`no model for ${routeId}`);
    expect(resourceById(template, logicalIdOf(methods[routeId])).Properties?.['RequestModels']).toEqual({
      'application/json': { Ref: logicalIdOf(model) },
    });
  });

  it.each(['submitTask', 'submitBatch'] as const)("%s's model is the generated draft-4 schema", (routeId) => {
    const model = models[routeId];
    if (!model) throw new Error(`no model for ${routeId}`);
    expect(resourceById(template, logicalIdOf(model)).Properties?.['Schema']).toEqual(
      expectedModels[routeId]?.schema,
    );
  });

  it('declares draft 4 in the task model', () => {
    expect(expectedModels.submitTask?.schema['$schema']).toBe('http://json-schema.org/draft-04/schema#');
  });

  it('leaves the admin routes to the handler', () => {
    expect(
      resourceById(template, logicalIdOf(methods.putStore)).Properties?.['RequestValidatorId'],
    ).toBeUndefined();
  });

  it("answers a refused body with the contract's invalid_request error", () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'BAD_REQUEST_BODY',
      ResponseTemplates: { 'application/json': BAD_REQUEST_BODY_TEMPLATE },
    });
  });

  it('answers it with status 400', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'BAD_REQUEST_BODY',
      StatusCode: '400',
    });
  });

  it('the refusal template is the contract error shape once API Gateway fills it', () => {
    const filled = BAD_REQUEST_BODY_TEMPLATE.replace(
      '$context.error.validationErrorString',
      '[object has missing required properties ([\\"eventId\\"])]',
    );
    expect(JSON.parse(filled)).toEqual({
      error: {
        code: 'invalid_request',
        message: 'body: [object has missing required properties (["eventId"])]',
      },
    });
  });
});

describe('GET /openapi.json on AWS', () => {
  it('is unauthenticated', () => {
    expect(openApiMethod.Properties?.['AuthorizationType']).toBe('NONE');
  });

  it('is answered by API Gateway itself (MOCK)', () => {
    expect(openApiMethod.Properties?.['Integration']).toMatchObject({ Type: 'MOCK' });
  });

  it('answers the generated document', () => {
    expect(openApiMethod.Properties?.['Integration']).toMatchObject({
      IntegrationResponses: [
        { StatusCode: '200', ResponseTemplates: { 'application/json': documentTemplate(openApiDocument()) } },
      ],
    });
  });

  it('its template parses back to the document (no $ or # left for Velocity)', () => {
    const body = documentTemplate(openApiDocument());
    expect(/[$#]/.test(body)).toBe(false);
    expect(JSON.parse(body)).toEqual(openApiDocument());
  });

  it('fits in a mapping template (300 KB)', () => {
    expect(documentTemplate(openApiDocument()).length).toBeLessThan(300 * 1024);
  });

  it('outputs the API URL', () => {
    template.hasOutput(StackOutputs.apiUrl, { Value: Match.anyValue() });
  });

  it("outputs the document's URL", () => {
    template.hasOutput(StackOutputs.openApiUrl, {
      Value: Match.objectLike({ 'Fn::Join': Match.arrayWith([Match.arrayWith(['/openapi.json'])]) }),
    });
  });
});
