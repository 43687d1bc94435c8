/** CloudFormation output keys of the stack, read by `aq --stack NAME` (shared by the stack and the CLI). */
export const StackOutputs = {
  /** The API's base URL, e.g. https://abc.execute-api.us-east-1.amazonaws.com/prod/ */
  apiUrl: 'ApiUrl',
  /** Where the OpenAPI document is served (unauthenticated). */
  openApiUrl: 'OpenApiUrl',
} as const;
