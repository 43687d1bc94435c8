import { DeleteApiKeyCommand, GetApiKeysCommand, type APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { DeleteQueueCommand, ListQueuesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { DEPLOYMENT_TAG_KEY, QueueNames, usageKeyName } from '../../lambdas/core/names.js';

/**
 * What a deployment creates at run time, outside CloudFormation, and `cdk destroy` therefore leaves:
 * every store's work queues and DLQ (`{prefix}-s-*`, `{prefix}-h-*`, `{prefix}-d-*`) and every tenant's API key.
 */
export interface Leftovers {
  readonly queueUrls: readonly string[];
  readonly apiKeys: readonly { readonly id: string; readonly name: string }[];
}

export interface LeftoverClients {
  readonly sqs: SQSClient;
  /** Absent in local mode: there is no API Gateway (the usage keys are derived in process). */
  readonly apiGateway?: APIGatewayClient;
}

/** ListQueues' page size ceiling. */
const QUEUE_PAGE = 1000;
/** GetApiKeys' page size ceiling. */
const KEY_PAGE = 500;

const queuesNamed = async (sqs: SQSClient, namePrefix: string): Promise<string[]> => {
  const urls: string[] = [];
  let token: string | undefined;
  do {
    const out = await sqs.send(
      new ListQueuesCommand({ QueueNamePrefix: namePrefix, MaxResults: QUEUE_PAGE, NextToken: token }),
    );
    urls.push(...(out.QueueUrls ?? []));
    token = out.NextToken;
  } while (token);
  return urls;
};

/**
 * The deployment's keys: tagged with its prefix, or (created before keys were tagged) untagged and named
 * `{prefix}-tenant-…`. Prefixes contain no '-', so no other deployment's key name starts that way.
 */
const keysOf = async (apiGateway: APIGatewayClient, prefix: string): Promise<Leftovers['apiKeys']> => {
  const namePrefix = usageKeyName(prefix, '');
  const found: { id: string; name: string }[] = [];
  let position: string | undefined;
  do {
    const out = await apiGateway.send(
      new GetApiKeysCommand({ nameQuery: namePrefix, limit: KEY_PAGE, position }),
    );
    for (const key of out.items ?? []) {
      if (!key.id || !key.name?.startsWith(namePrefix)) continue;
      const tag = key.tags?.[DEPLOYMENT_TAG_KEY];
      if (tag === prefix || tag === undefined) found.push({ id: key.id, name: key.name });
    }
    position = out.position;
  } while (position);
  return found;
};

/** Lists what the deployment with this queue prefix left behind; changes nothing. */
export const findLeftovers = async (clients: LeftoverClients, prefix: string): Promise<Leftovers> => {
  // `{prefix}-s-`, `{prefix}-d-` and `{prefix}-h-`: the markers of QueueNames, nothing else of the account.
  const queueUrls: string[] = [];
  for (const pattern of QueueNames.storeQueuePatterns(prefix))
    queueUrls.push(...(await queuesNamed(clients.sqs, pattern.slice(0, -1))));
  const apiKeys = clients.apiGateway ? await keysOf(clients.apiGateway, prefix) : [];
  return { queueUrls, apiKeys };
};

export interface RemoveOptions {
  /** Pause between API key deletions: API Gateway's control plane allows a few per second. */
  readonly keyPauseMs?: number;
  readonly log?: (line: string) => void;
}

/** Deletes what `findLeftovers` listed; a queue or key already gone counts as removed. */
export const removeLeftovers = async (
  clients: LeftoverClients,
  leftovers: Leftovers,
  options: RemoveOptions = {},
): Promise<{ queues: number; apiKeys: number }> => {
  const log = options.log ?? (() => undefined);
  let queues = 0;
  for (const url of leftovers.queueUrls) {
    try {
      await clients.sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    } catch (error) {
      if ((error as { name?: string }).name !== 'QueueDoesNotExist') throw error;
    }
    queues++;
    log(`deleted queue ${url}`);
  }
  let apiKeys = 0;
  if (clients.apiGateway) {
    for (const key of leftovers.apiKeys) {
      try {
        await clients.apiGateway.send(new DeleteApiKeyCommand({ apiKey: key.id }));
      } catch (error) {
        if ((error as { name?: string }).name !== 'NotFoundException') throw error;
      }
      apiKeys++;
      log(`deleted API key ${key.name} (${key.id})`);
      await new Promise((resolve) => setTimeout(resolve, options.keyPauseMs ?? 250));
    }
  }
  return { queues, apiKeys };
};
