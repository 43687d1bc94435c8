import { describe, expect, it } from 'vitest';
import { regionFromHost, RequestSigner, resolveRegion } from '../../../bin/aq/sigv4.js';

const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const signingDate = new Date('2026-12-01T12:00:00Z');
const url = new URL('https://abc123.execute-api.eu-west-1.amazonaws.com/prod/admin/stores/s1?limit=5');
const sign = (body?: string, creds = credentials) =>
  new RequestSigner('eu-west-1', creds).sign(
    { method: 'PUT', url, headers: { 'content-type': 'application/json' }, ...(body ? { body } : {}) },
    signingDate,
  );

describe('SigV4 signing of admin calls', () => {
  it('reads the region from an execute-api host', () => {
    expect(regionFromHost('abc123.execute-api.eu-west-1.amazonaws.com')).toBe('eu-west-1');
  });

  it('reads it from a China-region host', () => {
    expect(regionFromHost('abc123.execute-api.cn-north-1.amazonaws.com.cn')).toBe('cn-north-1');
  });

  it('falls back to AWS_REGION for a custom domain', () => {
    expect(resolveRegion('api.example.com', { AWS_REGION: 'sa-east-1' })).toBe('sa-east-1');
  });

  it('says what to set when the region cannot be known', () => {
    expect(() => resolveRegion('api.example.com', {})).toThrow(/set AWS_REGION/);
  });

  it('scopes the credential to the region and execute-api', async () => {
    const headers = await sign('{"plan":"pro"}');
    expect(headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261201\/eu-west-1\/execute-api\/aws4_request, /,
    );
  });

  it('signs the host, content type, body hash and date', async () => {
    const headers = await sign('{"plan":"pro"}');
    expect(headers['authorization']).toContain(
      'SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date,',
    );
  });

  it('dates the request', async () => {
    expect((await sign())['x-amz-date']).toBe('20261201T120000Z');
  });

  it('is deterministic for the same request and instant', async () => {
    expect((await sign('{"a":1}'))['authorization']).toBe((await sign('{"a":1}'))['authorization']);
  });

  it('covers the body (another body, another signature)', async () => {
    expect((await sign('{"a":1}'))['authorization']).not.toBe((await sign('{"a":2}'))['authorization']);
  });

  it('carries a session token from temporary credentials', async () => {
    const headers = await sign(undefined, { ...credentials, sessionToken: 'SESSION' } as typeof credentials);
    expect(headers['x-amz-security-token']).toBe('SESSION');
  });
});
