import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * The process's one X-Ray tracer (Powertools). Building it instruments `fetch` (the marketplace call)
 * and `http`/`https`; `traced` adds a subsegment per AWS SDK call of a client. Powertools turns itself
 * off outside Lambda (local mode, tests) and when POWERTOOLS_TRACE_ENABLED is false (the stack sets it
 * so with `-c tracing=false`); `traced` then returns the client untouched.
 */
export const tracer = new Tracer();

/** The client, with each of its calls recorded as an X-Ray subsegment when tracing is on. */
export const traced = <T>(client: T): T => tracer.captureAWSv3Client(client);
