import { CliError } from './errors.js';
import type { RequestSigner } from './sigv4.js';

export type Caller = 'admin' | 'tenant';

export interface ApiAnswer<T = unknown> {
  status: number;
  body: T;
}

export interface ApiClientOptions {
  /** Base URL with a trailing slash (a deployed stack's includes the stage: https://…/prod/). */
  endpoint: URL;
  env: NodeJS.ProcessEnv;
  /** Signs admin calls when the endpoint is https (a deployed stack); made on first use. */
  signer?: () => RequestSigner;
  fetch?: typeof fetch;
}

const isLocal = (endpoint: URL): boolean => endpoint.protocol === 'http:';

/** Why a 401/403 happened and what to set, for the kind of endpoint and caller. */
const credentialHint = (endpoint: URL, caller: Caller): string => {
  if (caller === 'tenant')
    return "set AQ_TOKEN to an integrator token of the store's tenant (aq tokens create <tenantId>)";
  return isLocal(endpoint)
    ? 'set ADMIN_TOKEN to the token local mode printed at start-up (npm start)'
    : 'use AWS credentials (AWS_PROFILE, or the standard chain) of a principal allowed execute-api:Invoke on the admin routes, and AWS_REGION if the host does not show it';
};

/**
 * The API as the CLI calls it. Local mode (http): admin calls carry `Bearer $ADMIN_TOKEN` (AQ_TOKEN as a
 * fallback); a deployed stack (https): admin calls are SigV4-signed. Integrator calls carry `Bearer $AQ_TOKEN`.
 */
export class ApiClient {
  private signer: RequestSigner | undefined;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly options: ApiClientOptions) {
    this.fetchFn = options.fetch ?? fetch;
  }

  get endpoint(): URL {
    return this.options.endpoint;
  }

  async request<T = unknown>(
    method: string,
    path: string,
    caller: Caller,
    body?: unknown,
  ): Promise<ApiAnswer<T>> {
    const url = new URL(path.replace(/^\//, ''), this.options.endpoint);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    Object.assign(headers, await this.credentials(method, url, headers, payload, caller));
    let res: Response;
    try {
      res = await this.fetchFn(url, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new CliError(
        `cannot reach ${this.options.endpoint.origin} (${cause}): ` +
          (isLocal(this.options.endpoint)
            ? 'is local mode running (npm start)? Otherwise set --endpoint or AQ_ENDPOINT'
            : 'check --endpoint / AQ_ENDPOINT / --stack and your network'),
      );
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
    } catch {
      // not JSON (a proxy's page): keep the text for the error message
    }
    if (res.status === 401 || res.status === 403) {
      throw new CliError(
        `${res.status} ${errorText(parsed)}: ${credentialHint(this.options.endpoint, caller)}`,
        1,
        parsed,
      );
    }
    return { status: res.status, body: parsed as T };
  }

  /** A 2xx answer's body, else a CliError naming the API's error code and message. */
  async call<T = unknown>(method: string, path: string, caller: Caller, body?: unknown): Promise<T> {
    const answer = await this.request<T>(method, path, caller, body);
    if (answer.status >= 200 && answer.status < 300) return answer.body;
    throw apiError(`${method} ${path}`, answer);
  }

  private async credentials(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    caller: Caller,
  ): Promise<Record<string, string>> {
    const { env } = this.options;
    if (caller === 'tenant') {
      const token = env['AQ_TOKEN'];
      if (!token)
        throw new CliError(
          `this command calls the integrator API: ${credentialHint(this.endpoint, 'tenant')}`,
        );
      return { authorization: `Bearer ${token}` };
    }
    if (isLocal(this.endpoint)) {
      const token = env['ADMIN_TOKEN'] ?? env['AQ_TOKEN'];
      if (!token)
        throw new CliError(`admin commands need a credential: ${credentialHint(this.endpoint, 'admin')}`);
      return { authorization: `Bearer ${token}` };
    }
    if (!this.options.signer) throw new CliError('no SigV4 signer configured for an https endpoint');
    this.signer ??= this.options.signer();
    const { authorization: _a, ...unsigned } = headers;
    return this.signer.sign({ method, url, headers: unsigned, ...(body === undefined ? {} : { body }) });
  }
}

export const errorText = (body: unknown): string => {
  const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
  if (error?.code) return `${error.code}: ${error.message ?? ''}`;
  return typeof body === 'string' && body ? body.slice(0, 200) : 'error';
};

export const apiError = (what: string, answer: ApiAnswer): CliError => {
  const code = (answer.body as { error?: { code?: string } } | undefined)?.error?.code;
  if (answer.status === 404 && code === 'route_not_found') {
    return new CliError(
      `${what}: this API has no such route (404 route_not_found); the deployed version may predate it`,
      1,
      answer.body,
    );
  }
  return new CliError(`${what} failed: ${answer.status} ${errorText(answer.body)}`, 1, answer.body);
};
