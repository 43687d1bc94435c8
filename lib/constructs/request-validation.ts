import {
  CfnMethod,
  Model,
  RequestValidator,
  ResponseType,
  type JsonSchema,
  type Method,
  type RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { gatewayRequestModels } from '../../lambdas/core/openapi/gateway-models.js';
import type { RouteId } from '../../lambdas/core/routes.js';

export interface RequestValidationProps {
  readonly api: RestApi;
  /** The API's methods by route id (HttpApi.methods); those with a model get a body validator. */
  readonly methods: Readonly<Record<RouteId, Method>>;
}

/**
 * The contract's 400 for a body the gateway refuses. `validationErrorString` names what failed (e.g.
 * `[object has missing required properties (["eventId"])]`); API Gateway escapes it for a JSON string.
 */
export const BAD_REQUEST_BODY_TEMPLATE =
  '{"error":{"code":"invalid_request","message":"body: $context.error.validationErrorString"}}';

/**
 * Request models and a body validator on the integrator routes (models in document order, from
 * gatewayRequestModels): a malformed task or batch is refused by API Gateway with the contract's error
 * body, without invoking (and paying for) the ingest function. The handler still validates everything.
 */
export class RequestValidation extends Construct {
  public readonly validator: RequestValidator;
  public readonly models: Readonly<Partial<Record<RouteId, Model>>>;

  constructor(scope: Construct, id: string, props: RequestValidationProps) {
    super(scope, id);
    const { api } = props;
    this.validator = new RequestValidator(this, 'BodyValidator', {
      restApi: api,
      validateRequestBody: true,
      validateRequestParameters: false,
    });
    const models: Partial<Record<RouteId, Model>> = {};
    const definitions = gatewayRequestModels();
    for (const [routeId, definition] of Object.entries(definitions) as [
      RouteId,
      (typeof definitions)[RouteId],
    ][]) {
      if (!definition) continue;
      const model = new Model(this, `${definition.name}Model`, {
        restApi: api,
        contentType: 'application/json',
        description: `${definition.name}, generated from the zod schemas (see lambdas/core/openapi)`,
        // Already draft-4 JSON Schema with its own $schema: pass it through as is.
        schema: definition.schema as JsonSchema,
      });
      const method = props.methods[routeId].node.defaultChild as CfnMethod;
      method.requestModels = { 'application/json': model.modelId };
      method.requestValidatorId = this.validator.requestValidatorId;
      models[routeId] = model;
    }
    this.models = models;
    // These properties are set after the methods were built: make a change to them redeploy the stage.
    api.latestDeployment?.addToLogicalId({ requestModels: definitions });
    api.addGatewayResponse('GatewayErrorBAD_REQUEST_BODY', {
      type: ResponseType.BAD_REQUEST_BODY,
      statusCode: '400',
      templates: { 'application/json': BAD_REQUEST_BODY_TEMPLATE },
    });
  }
}
