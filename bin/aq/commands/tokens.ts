import type { Command } from 'commander';
import { print, table, type CliContext } from '../context.js';

const tokensPath = (tenantId: string, rest = ''): string =>
  `admin/tenants/${encodeURIComponent(tenantId)}/tokens${rest}`;

interface TokenView {
  tokenId: string;
  status: string;
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
}

export const registerTokens = (program: Command, ctx: () => CliContext): void => {
  const tokens = program.command('tokens').description('integrator credentials of a tenant');

  tokens
    .command('create <tenantId>')
    .description('issue a token (shown once: store it now)')
    .action(async (tenantId: string) => {
      const c = ctx();
      print(
        c,
        await (await c.client()).call('POST', tokensPath(tenantId), 'admin'),
        (r: { token: string; tokenId: string }) =>
          `token ${r.tokenId} for ${tenantId} (shown once):\n${r.token}`,
      );
    });

  tokens
    .command('list <tenantId>')
    .description("a tenant's tokens (never the secret)")
    .action(async (tenantId: string) => {
      const c = ctx();
      print(
        c,
        await (await c.client()).call('GET', tokensPath(tenantId), 'admin'),
        (r: { tokens: TokenView[] }) =>
          table(
            ['TOKEN', 'STATUS', 'CREATED', 'EXPIRES', 'REVOKED'],
            r.tokens.map((t) => [t.tokenId, t.status, t.createdAt, t.expiresAt ?? '', t.revokedAt ?? '']),
          ),
      );
    });

  tokens
    .command('revoke <tenantId> <tokenId>')
    .description('revoke a token (effective within the authorizer cache, 5 minutes at most)')
    .action(async (tenantId: string, tokenId: string) => {
      const c = ctx();
      print(
        c,
        await (
          await c.client()
        ).call('POST', tokensPath(tenantId, `/${encodeURIComponent(tokenId)}/revoke`), 'admin'),
        (t: TokenView) => `token ${t.tokenId}: ${t.status}`,
      );
    });

  tokens
    .command('rotate <tenantId> <tokenId>')
    .description('issue a replacement; the old token keeps working for the overlap')
    .option('--overlap <seconds>', 'how long the old token keeps working (default 3600)')
    .action(async (tenantId: string, tokenId: string, o: { overlap?: string }) => {
      const c = ctx();
      const body = o.overlap === undefined ? undefined : { overlapSeconds: Number(o.overlap) };
      print(
        c,
        await (
          await c.client()
        ).call('POST', tokensPath(tenantId, `/${encodeURIComponent(tokenId)}/rotate`), 'admin', body),
        (r: { token: string; tokenId: string; replaced: TokenView }) =>
          `token ${r.tokenId} replaces ${r.replaced.tokenId} (${r.replaced.status} until ${r.replaced.expiresAt ?? '?'}); shown once:\n${r.token}`,
      );
    });
};
