import {
  GetEventSourceMappingCommand,
  UpdateEventSourceMappingCommand,
  type LambdaClient,
} from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { LevelLoad } from '../core/level-caps.js';
import type { StorePriority } from '../core/plans.js';
import type { LevelSources } from '../core/ports.js';

const count = (value: string | undefined): number => {
  const n = Number(value ?? 0);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/** The levels' attention queues (SQS counts) and their event source mappings (Lambda's control plane). */
export class LambdaLevelSources implements LevelSources {
  constructor(
    private readonly sqs: SQSClient,
    private readonly lambda: LambdaClient,
    private readonly queueUrls: Readonly<Record<StorePriority, string>>,
    /** Each level's event source mapping (its UUID). */
    private readonly mappings: Readonly<Record<StorePriority, string>>,
  ) {}

  async load(level: StorePriority): Promise<LevelLoad> {
    const out = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.queueUrls[level],
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return {
      waiting: count(out.Attributes?.ApproximateNumberOfMessages),
      inFlight: count(out.Attributes?.ApproximateNumberOfMessagesNotVisible),
    };
  }

  async cap(level: StorePriority): Promise<number> {
    const out = await this.lambda.send(new GetEventSourceMappingCommand({ UUID: this.mappings[level] }));
    const cap = out.ScalingConfig?.MaximumConcurrency;
    if (typeof cap !== 'number')
      throw new Error(
        `the ${level} level's event source has no MaximumConcurrency (UUID ${this.mappings[level]})`,
      );
    return cap;
  }

  async setCap(level: StorePriority, cap: number): Promise<void> {
    await this.lambda.send(
      new UpdateEventSourceMappingCommand({
        UUID: this.mappings[level],
        ScalingConfig: { MaximumConcurrency: cap },
      }),
    );
  }
}
