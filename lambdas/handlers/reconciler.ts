import { createReconcilerHandler } from '../app/reconciler-app.js';
import { loadConfigFromProcess } from '../config/runtime-config.js';

/** Composition root: config parsed and clients built once per cold start. */
export const handler = createReconcilerHandler(loadConfigFromProcess('reconciler'));
