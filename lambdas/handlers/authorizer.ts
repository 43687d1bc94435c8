import { createAuthorizerHandler } from '../app/authorizer-app.js';
import { loadConfigFromProcess } from '../config/runtime-config.js';

/** Composition root: config parsed and clients built once per cold start. */
export const handler = createAuthorizerHandler(loadConfigFromProcess('authorizer'));
