import { randomBytes } from 'node:crypto';
import {
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
  type APIGatewayClient,
} from '@aws-sdk/client-api-gateway';
import { DEPLOYMENT_TAG_KEY, usageKeyName } from '../core/names.js';
import type { TenantUsageKeys } from '../core/ports.js';

/** 160 random bits as 40 hex digits: API Gateway wants at least 20 characters, and hex needs no escaping. */
export const newUsageKeyValue = (): string => randomBytes(20).toString('hex');

interface FoundKey {
  id: string;
  value: string;
  createdAt: number;
}

const PAGE = 500;

/**
 * Tenant throttle identities as API Gateway API keys in the stage's usage plan (the API's key source is
 * AUTHORIZER: the authorizer returns the value, clients never send it). One key per tenant, named by
 * `usageKeyName`; `ensure` finds it by name, creates it when missing and adds it to the plan every time,
 * reading ConflictException as "already in the plan", so a retry after any partial failure completes the
 * job. The plan is found once per container from its API stage: its id cannot be handed to this function
 * at deploy time (the plan depends on the stage, the stage on the methods, the methods on this function).
 */
export class ApiGatewayUsageKeys implements TenantUsageKeys {
  private planId: Promise<string> | undefined;

  constructor(
    private readonly client: APIGatewayClient,
    private readonly prefix: string,
    /** `{restApiId}:{stageName}`, the stage the usage plan is bound to. */
    private readonly apiStage: string,
    private readonly newValue: () => string = newUsageKeyValue,
  ) {}

  async ensure(tenantId: string): Promise<string> {
    // The plan first: if it cannot be found, no key is created for nothing.
    const usagePlanId = await this.usagePlanId();
    const name = usageKeyName(this.prefix, tenantId);
    let key = await this.find(name);
    if (!key) {
      const created = await this.client.send(
        new CreateApiKeyCommand({
          name,
          enabled: true,
          value: this.newValue(),
          description: `Attention Queue: throttle identity of tenant ${tenantId}`,
          // API keys outlive the stack (10,000 per account and region): the tag says whose this one is.
          tags: { [DEPLOYMENT_TAG_KEY]: this.prefix, tenantId },
        }),
      );
      // Two requests racing for a new tenant may each create a key: both then adopt the oldest one, so
      // every token of the tenant still draws on one bucket (the other key stays outside the plan, unused).
      key =
        (await this.find(name)) ??
        (created.id && created.value ? { id: created.id, value: created.value, createdAt: 0 } : undefined);
      if (!key) throw new Error(`API Gateway created API key ${name} without an id or value`);
    }
    await this.addToPlan(usagePlanId, key.id).catch(async (error: unknown) => {
      if ((error as { name?: string }).name !== 'NotFoundException') throw error;
      // The plan this container remembered is gone (the stack replaced it): find the stage's plan again.
      this.planId = undefined;
      await this.addToPlan(await this.usagePlanId(), key.id);
    });
    return key.value;
  }

  private async addToPlan(usagePlanId: string, keyId: string): Promise<void> {
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId, keyType: 'API_KEY' }));
    } catch (error) {
      if ((error as { name?: string }).name !== 'ConflictException') throw error;
      // Already in the plan: the usual case for every token after a tenant's first.
    }
  }

  /** The oldest key with exactly this name (`nameQuery` also matches longer names that start with it). */
  private async find(name: string): Promise<FoundKey | undefined> {
    const found: FoundKey[] = [];
    let position: string | undefined;
    do {
      const out = await this.client.send(
        new GetApiKeysCommand({ nameQuery: name, includeValues: true, limit: PAGE, position }),
      );
      for (const item of out.items ?? []) {
        if (item.name !== name || !item.id || !item.value) continue;
        found.push({ id: item.id, value: item.value, createdAt: item.createdDate?.getTime() ?? 0 });
      }
      position = out.position;
    } while (position);
    found.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    return found[0];
  }

  private usagePlanId(): Promise<string> {
    // Cached once found; a failed lookup is forgotten so the next request tries again.
    this.planId ??= this.findPlan().catch((error: unknown) => {
      this.planId = undefined;
      throw error;
    });
    return this.planId;
  }

  private async findPlan(): Promise<string> {
    const [apiId, stage] = this.apiStage.split(':');
    const matches: string[] = [];
    let position: string | undefined;
    do {
      const out = await this.client.send(new GetUsagePlansCommand({ limit: PAGE, position }));
      for (const plan of out.items ?? []) {
        if (plan.id && plan.apiStages?.some((s) => s.apiId === apiId && s.stage === stage))
          matches.push(plan.id);
      }
      position = out.position;
    } while (position);
    const [only, ...others] = matches;
    if (!only || others.length > 0) {
      // A deployment fault, not a passing one: answered 500 and logged, not 503.
      throw new Error(
        `expected exactly one usage plan on API stage ${this.apiStage}, found ${matches.length}`,
      );
    }
    return only;
  }
}
