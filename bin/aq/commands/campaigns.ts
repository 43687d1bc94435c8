import type { Command } from 'commander';
import { parseJsonOption, print, table, type CliContext } from '../context.js';
import { CliError } from '../errors.js';

interface Target {
  store?: string;
  tenant?: string;
}

/** `admin/stores/{id}/campaigns` or `admin/tenants/{id}/campaigns` (contract: campaign windows). */
const campaignsPath = (t: Target): string => {
  if ((t.store === undefined) === (t.tenant === undefined))
    throw new CliError('give exactly one of --store or --tenant', 2);
  return t.store !== undefined
    ? `admin/stores/${encodeURIComponent(t.store)}/campaigns`
    : `admin/tenants/${encodeURIComponent(t.tenant ?? '')}/campaigns`;
};

interface Campaign {
  campaignId?: string;
  from?: string;
  until?: string;
  plan?: string;
  note?: string;
}

export const registerCampaigns = (program: Command, ctx: () => CliContext): void => {
  const campaigns = program
    .command('campaigns')
    .description('campaign windows: a plan or overrides for a store or a whole tenant between two instants');
  const target = (c: Command) =>
    c
      .option('--store <storeId>', 'a store campaign')
      .option('--tenant <tenantId>', 'a campaign for every store of a tenant');

  target(campaigns.command('put <campaignId>'))
    .description('create or replace a campaign (PUT …/campaigns/{campaignId})')
    .requiredOption('--from <iso>', 'start, ISO-8601')
    .requiredOption('--until <iso>', 'end, ISO-8601 (at most 90 days after --from)')
    .option('--plan <plan>', 'plan during the window')
    .option('--overrides <json>', 'policy overrides during the window, as JSON')
    .option('--note <text>', 'why')
    .action(
      async (
        campaignId: string,
        o: Target & { from: string; until: string; plan?: string; overrides?: string; note?: string },
      ) => {
        const c = ctx();
        const overrides = parseJsonOption('overrides', o.overrides);
        const body = {
          from: o.from,
          until: o.until,
          ...(o.plan ? { plan: o.plan } : {}),
          ...(overrides === undefined ? {} : { overrides }),
          ...(o.note ? { note: o.note } : {}),
        };
        print(
          c,
          await (
            await c.client()
          ).call('PUT', `${campaignsPath(o)}/${encodeURIComponent(campaignId)}`, 'admin', body),
        );
      },
    );

  target(campaigns.command('list'))
    .description('campaigns of a store or tenant (GET …/campaigns)')
    .action(async (o: Target) => {
      const c = ctx();
      const result = await (
        await c.client()
      ).call<{ campaigns: Campaign[] }>('GET', campaignsPath(o), 'admin');
      print(c, result, (v: { campaigns: Campaign[] }) =>
        table(
          ['CAMPAIGN', 'FROM', 'UNTIL', 'PLAN', 'NOTE'],
          v.campaigns.map((k) => [
            k.campaignId ?? '',
            k.from ?? '',
            k.until ?? '',
            k.plan ?? '',
            k.note ?? '',
          ]),
        ),
      );
    });

  target(campaigns.command('delete <campaignId>'))
    .description('delete a campaign (DELETE …/campaigns/{campaignId})')
    .action(async (campaignId: string, o: Target) => {
      const c = ctx();
      await (
        await c.client()
      ).call('DELETE', `${campaignsPath(o)}/${encodeURIComponent(campaignId)}`, 'admin');
      print(c, { campaignId, deleted: true }, () => `campaign ${campaignId} deleted`);
    });
};
