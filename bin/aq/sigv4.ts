import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { CliError } from './errors.js';

/** `abc123.execute-api.eu-west-1.amazonaws.com` → `eu-west-1` (also .amazonaws.com.cn). */
export const regionFromHost = (hostname: string): string | undefined =>
  /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(hostname)?.[1];

export const resolveRegion = (hostname: string, env: NodeJS.ProcessEnv): string => {
  const region = regionFromHost(hostname) ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'];
  if (!region) {
    throw new CliError(
      `cannot tell the AWS region of ${hostname}: set AWS_REGION (SigV4 signs for one region)`,
    );
  }
  return region;
};

export interface SignableRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

export type Credentials = AwsCredentialIdentity | AwsCredentialIdentityProvider;

/** The standard chain, loaded on first use (local-mode commands never need it). */
const standardChain = (): AwsCredentialIdentityProvider => {
  let provider: AwsCredentialIdentityProvider | undefined;
  return async (props) => {
    provider ??= (await import('@aws-sdk/credential-providers')).fromNodeProviderChain();
    return provider(props);
  };
};

/**
 * Signs an admin call for API Gateway's IAM authorization (service execute-api) with credentials from the
 * standard chain (env, profile, SSO, web identity, instance role…), as the AWS CLI would.
 */
export class RequestSigner {
  private readonly signer: SignatureV4;

  constructor(region: string, credentials: Credentials = standardChain()) {
    this.signer = new SignatureV4({ service: 'execute-api', region, credentials, sha256: Sha256 });
  }

  async sign(request: SignableRequest, signingDate?: Date): Promise<Record<string, string>> {
    const { url } = request;
    const query: Record<string, string> = {};
    url.searchParams.forEach((value, key) => (query[key] = value));
    const signed = await this.signer.sign(
      {
        method: request.method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query,
        headers: { ...request.headers, host: url.host },
        ...(request.body === undefined ? {} : { body: request.body }),
      },
      signingDate ? { signingDate } : {},
    );
    return signed.headers;
  }
}
