/**
 * The error hierarchy. HTTP answers and retry decisions read `status`, `code` and `retryable`,
 * never message text.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryable = false,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details?: unknown) {
    super(400, 'invalid_request', message, false, details);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'missing or invalid credential') {
    super(401, 'unauthorized', message);
  }
}
export class ForbiddenError extends AppError {
  constructor(message = 'this credential does not own the store') {
    super(403, 'forbidden', message);
  }
}
export class NotFoundError extends AppError {
  constructor(code: string, message: string) {
    super(404, code, message);
  }
}
export class ConflictError extends AppError {
  constructor(code: string, message: string) {
    super(409, code, message);
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number, what = 'request body') {
    super(413, 'payload_too_large', `${what} exceeds ${limitBytes} bytes`);
  }
}
/** A dependency (SQS, DynamoDB) failed; nothing was accepted and the caller may retry. */
export class DependencyError extends AppError {
  constructor(message: string, cause?: unknown) {
    super(503, 'dependency_unavailable', message, true);
    if (cause !== undefined) this.cause = cause;
  }
}

/** Thrown by the dispatch state when a conditional write loses; the caller decides what that means. */
export class ConditionFailedError extends Error {
  constructor(readonly current: Record<string, unknown> | undefined) {
    super('condition failed');
    this.name = 'ConditionFailedError';
  }
}
