import { CfnOutput } from 'aws-cdk-lib';
import {
  AuthorizationType,
  MockIntegration,
  PassthroughBehavior,
  type Method,
  type RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { StackOutputs } from '../../lambdas/config/stack-outputs.js';
import { OPENAPI_PATH, openApiDocument } from '../../lambdas/core/openapi/document.js';

export interface OpenApiRouteProps {
  readonly api: RestApi;
}

/**
 * The document as a mapping template body. Velocity would read `$name` and `#word` in it as references
 * and directives; JSON's \u escapes of the two characters mean the same to any JSON parser.
 */
export const documentTemplate = (document: unknown): string =>
  JSON.stringify(document).replace(/\$/g, '\\u0024').replace(/#/g, '\\u0023');

/**
 * `GET /openapi.json`, unauthenticated, answered by API Gateway itself (a MOCK integration whose response
 * template is the document generated at synth time), and the stack outputs ApiUrl and OpenApiUrl.
 */
export class OpenApiRoute extends Construct {
  public readonly method: Method;

  constructor(scope: Construct, id: string, props: OpenApiRouteProps) {
    super(scope, id);
    const { api } = props;
    const integration = new MockIntegration({
      passthroughBehavior: PassthroughBehavior.WHEN_NO_TEMPLATES,
      requestTemplates: { 'application/json': '{"statusCode": 200}' },
      integrationResponses: [
        { statusCode: '200', responseTemplates: { 'application/json': documentTemplate(openApiDocument()) } },
      ],
    });
    this.method = api.root.resourceForPath(OPENAPI_PATH).addMethod('GET', integration, {
      authorizationType: AuthorizationType.NONE,
      methodResponses: [{ statusCode: '200' }],
    });
    new CfnOutput(this, 'ApiUrlOutput', {
      value: api.url,
      description: 'Base URL of the API (aq --stack reads it)',
    }).overrideLogicalId(StackOutputs.apiUrl);
    new CfnOutput(this, 'OpenApiUrlOutput', {
      value: api.urlForPath(OPENAPI_PATH),
      description: 'The OpenAPI 3.1 document of the API',
    }).overrideLogicalId(StackOutputs.openApiUrl);
  }
}
