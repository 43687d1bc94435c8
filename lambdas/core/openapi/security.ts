import type { RouteAuth } from '../routes.js';

/**
 * How each kind of route authenticates. Integrators send their tenant token as a bearer; admin routes are
 * IAM-authorized on AWS (a SigV4-signed request; API Gateway's `awsSigv4` apiKey convention) and take
 * `Bearer $ADMIN_TOKEN` in local mode.
 */
export const SECURITY_SCHEMES = {
  tenantBearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'aqt_…',
    description: 'An integrator token from POST /admin/tenants/{tenantId}/tokens.',
  },
  sigv4: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      'Deployed stack: AWS Signature Version 4 (service execute-api) from an IAM principal allowed ' +
      'execute-api:Invoke on the admin routes. `npx aq` signs from the standard AWS credential chain.',
    'x-amazon-apigateway-authtype': 'awsSigv4',
  },
  localAdminBearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'Local mode only: the admin bearer token `npm start` prints (never used by a deployed stack).',
  },
} as const;

export const securityFor = (auth: RouteAuth): Record<string, string[]>[] => {
  switch (auth) {
    case 'tenant':
      return [{ tenantBearer: [] }];
    case 'iam':
      return [{ sigv4: [] }, { localAdminBearer: [] }];
    case 'none':
      return [];
  }
};
