import { createHmac } from 'node:crypto';
import type { TenantUsageKeys } from '../core/ports.js';

/**
 * Local mode's tenant throttle identities: a keyed hash of the tenant id, so every token of a tenant
 * carries the same value across restarts without any store, and local mode's API server keys its token
 * buckets on it as API Gateway's usage plan keys on an API key. The value is an identifier, not a secret
 * (the authorizer hands it out; clients cannot choose it), so a fixed, per-prefix hash key is enough.
 */
export class DerivedUsageKeys implements TenantUsageKeys {
  constructor(private readonly prefix: string) {}

  async ensure(tenantId: string): Promise<string> {
    return createHmac('sha256', `attention-queue/usage-key/${this.prefix}`)
      .update(tenantId, 'utf8')
      .digest('hex')
      .slice(0, 40);
  }
}
