import { describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../../bin/aq/program.js';
import { RequestSigner } from '../../../bin/aq/sigv4.js';

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

/** The CLI with a fake API: records each request and answers `answer`. */
const run = async (
  args: string[],
  env: NodeJS.ProcessEnv = { ADMIN_TOKEN: 'admin-secret' },
  answer: { status: number; body: unknown } = { status: 200, body: {} },
  extra: Partial<CliIo> = {},
) => {
  const sent: Sent[] = [];
  let stdout = '';
  let stderr = '';
  const fetchFake = (async (input: URL | string, init?: RequestInit) => {
    sent.push({
      method: init?.method ?? 'GET',
      url: String(input),
      headers: init?.headers as Record<string, string>,
      ...(init?.body === undefined ? {} : { body: JSON.parse(String(init.body)) as unknown }),
    });
    return new Response(JSON.stringify(answer.body), { status: answer.status });
  }) as typeof fetch;
  const code = await runCli(args, {
    stdout: (t) => (stdout += t),
    stderr: { write: (t: string) => (stderr += t) },
    env,
    fetch: fetchFake,
    ...extra,
  });
  return { code, sent, stdout, stderr };
};

describe('aq argument parsing', () => {
  it('maps stores put to PUT /admin/stores/{storeId} with the body', async () => {
    const { sent } = await run([
      'stores',
      'put',
      's1',
      '--tenant',
      't1',
      '--marketplace',
      'ml',
      '--plan',
      'pro',
    ]);
    expect(sent[0]).toMatchObject({
      method: 'PUT',
      url: 'http://localhost:3000/admin/stores/s1',
      body: { tenantId: 't1', marketplace: 'ml', plan: 'pro' },
    });
  });

  it('parses --overrides as JSON', async () => {
    const { sent } = await run([
      'stores',
      'put',
      's1',
      '--tenant',
      't1',
      '--marketplace',
      'ml',
      '--plan',
      'pro',
      '--overrides',
      '{"ratePerSecond":9}',
    ]);
    expect(sent[0]?.body).toMatchObject({ overrides: { ratePerSecond: 9 } });
  });

  it('refuses an unknown plan before calling the API', async () => {
    const { code, sent } = await run([
      'stores',
      'put',
      's1',
      '--tenant',
      't',
      '--marketplace',
      'm',
      '--plan',
      'gold',
    ]);
    expect({ code, calls: sent.length }).toEqual({ code: 1, calls: 0 });
  });

  it('sends the local admin token as a bearer', async () => {
    const { sent } = await run(['stores', 'get', 's1']);
    expect(sent[0]?.headers['authorization']).toBe('Bearer admin-secret');
  });

  it('takes the endpoint from AQ_ENDPOINT', async () => {
    const { sent } = await run(['stores', 'get', 's1'], {
      ADMIN_TOKEN: 'a',
      AQ_ENDPOINT: 'http://127.0.0.1:4000',
    });
    expect(sent[0]?.url).toBe('http://127.0.0.1:4000/admin/stores/s1');
  });

  it('prefers --endpoint to AQ_ENDPOINT', async () => {
    const { sent } = await run(['--endpoint', 'http://127.0.0.1:5000', 'stores', 'get', 's1'], {
      ADMIN_TOKEN: 'a',
      AQ_ENDPOINT: 'http://127.0.0.1:4000',
    });
    expect(sent[0]?.url).toBe('http://127.0.0.1:5000/admin/stores/s1');
  });

  it("keeps a deployed endpoint's stage path", async () => {
    const signer = () => new RequestSigner('us-east-1', { accessKeyId: 'AKID', secretAccessKey: 'SECRET' });
    const { sent } = await run(
      ['--endpoint', 'https://abc.execute-api.us-east-1.amazonaws.com/prod', 'stores', 'get', 's1'],
      {},
      undefined,
      { signer },
    );
    expect(sent[0]?.url).toBe('https://abc.execute-api.us-east-1.amazonaws.com/prod/admin/stores/s1');
  });

  it('signs admin calls to an https endpoint with SigV4', async () => {
    const signer = () => new RequestSigner('us-east-1', { accessKeyId: 'AKID', secretAccessKey: 'SECRET' });
    const { sent } = await run(
      ['--endpoint', 'https://abc.execute-api.us-east-1.amazonaws.com/prod', 'stores', 'get', 's1'],
      {},
      undefined,
      { signer },
    );
    expect(sent[0]?.headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/us-east-1\/execute-api\//,
    );
  });

  it('reads the endpoint from the stack outputs with --stack', async () => {
    const { sent } = await run(['--stack', 'Aq', 'stores', 'get', 's1'], { ADMIN_TOKEN: 'a' }, undefined, {
      readOutputs: async (name): Promise<Record<string, string>> =>
        name === 'Aq' ? { ApiUrl: 'http://127.0.0.1:7000/' } : {},
    });
    expect(sent[0]?.url).toBe('http://127.0.0.1:7000/admin/stores/s1');
  });

  it('says what to set when no admin credential is given', async () => {
    const { code, stderr } = await run(['stores', 'get', 's1'], {});
    expect({ code, stderr }).toEqual({ code: 1, stderr: expect.stringContaining('set ADMIN_TOKEN') });
  });

  it('says what to set on a 401', async () => {
    const { stderr } = await run(['stores', 'get', 's1'], undefined, {
      status: 401,
      body: { error: { code: 'unauthorized', message: 'bad' } },
    });
    expect(stderr).toContain('401 unauthorized: bad: set ADMIN_TOKEN');
  });

  it('sends AQ_TOKEN on integrator commands', async () => {
    const { sent } = await run(
      ['task', 's1', 'e1'],
      { AQ_TOKEN: 'aqt_x' },
      { status: 200, body: { status: 'pending' } },
    );
    expect(sent[0]).toMatchObject({
      url: 'http://localhost:3000/v1/stores/s1/tasks/e1',
      headers: { authorization: 'Bearer aqt_x' },
    });
  });

  it('maps stores pause to PATCH status paused', async () => {
    const { sent } = await run(['stores', 'pause', 's1']);
    expect(sent[0]).toMatchObject({ method: 'PATCH', body: { status: 'paused' } });
  });

  it('maps stores set to PATCH setOverrides: numbers as numbers, null to remove, text as text', async () => {
    const { sent } = await run([
      'stores',
      'set',
      's1',
      'throttleScope=task',
      'ratePerSecond=40',
      'maxAttempts=null',
    ]);
    expect(sent[0]).toMatchObject({
      method: 'PATCH',
      url: 'http://localhost:3000/admin/stores/s1',
      body: { setOverrides: { throttleScope: 'task', ratePerSecond: 40, maxAttempts: null } },
    });
  });

  it('refuses a stores set pair without a field and a value, sending nothing', async () => {
    const { sent, code } = await run(['stores', 'set', 's1', '=task']);
    expect({ sent: sent.length, code }).toEqual({ sent: 0, code: 1 });
  });

  it('maps stores purge --confirm to the purge body', async () => {
    const { sent } = await run(['stores', 'purge', 's1', '--confirm', 's1'], undefined, {
      status: 202,
      body: { discarded: 0 },
    });
    expect(sent[0]).toMatchObject({
      url: 'http://localhost:3000/admin/stores/s1/queue/purge',
      body: { confirm: 's1' },
    });
  });

  it('maps tokens rotate --overlap to overlapSeconds', async () => {
    const { sent } = await run(['tokens', 'rotate', 't1', 'abc', '--overlap', '60'], undefined, {
      status: 201,
      body: { token: 'x', tokenId: 'y', replaced: { tokenId: 'abc', status: 'expiring' } },
    });
    expect(sent[0]).toMatchObject({
      url: 'http://localhost:3000/admin/tenants/t1/tokens/abc/rotate',
      body: { overlapSeconds: 60 },
    });
  });

  it('needs exactly one of --store and --tenant for campaigns', async () => {
    const { code, sent } = await run(['campaigns', 'list']);
    expect({ code, calls: sent.length }).toEqual({ code: 2, calls: 0 });
  });

  it('maps campaigns put --tenant to the tenant route', async () => {
    const { sent } = await run(
      [
        'campaigns',
        'put',
        'bf',
        '--tenant',
        't1',
        '--from',
        '2026-11-27T00:00:00Z',
        '--until',
        '2026-11-30T00:00:00Z',
      ],
      undefined,
      { status: 201, body: {} },
    );
    expect(sent[0]).toMatchObject({
      method: 'PUT',
      url: 'http://localhost:3000/admin/tenants/t1/campaigns/bf',
      body: { from: '2026-11-27T00:00:00Z', until: '2026-11-30T00:00:00Z' },
    });
  });

  it('prints JSON with --json', async () => {
    const { stdout } = await run(['--json', 'stores', 'get', 's1'], undefined, {
      status: 200,
      body: { storeId: 's1' },
    });
    expect(JSON.parse(stdout)).toEqual({ storeId: 's1' });
  });

  it('exits 0 on --help', async () => {
    expect((await run(['--help'])).code).toBe(0);
  });
});
