import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { EnvNames } from '../../lambdas/config/env-names.js';
import type { FunctionName } from '../../lambdas/config/runtime-config.js';
import { FUNCTIONS } from '../../lambdas/config/topology.js';
import { functionEnvironment, type DeployEnvironment } from '../function-environment.js';

/** Topology entries are relative to the repository root, whatever directory cdk or vitest runs from. */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The latest Node.js runtime Lambda offers (cdk-nag's L1 and LambdaLatestVersion check it); the code also runs on Node 20 locally. */
const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

/** ESM output still meets CommonJS dependencies that call require(); give them one. */
const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

export interface ServiceFunctionProps {
  /** Which topology entry to build: entry file, timeout, memory and variable names come from FUNCTIONS. */
  readonly name: FunctionName;
  /** Every value known at deploy time; the function takes the names FUNCTIONS[name].env lists. */
  readonly environment: DeployEnvironment;
  /**
   * How long the function's logs are kept.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * What happens to the log group when the stack is deleted.
   * @default RemovalPolicy.RETAIN
   */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * Concurrency reserved for (and capping) this function.
   * @default - no reservation
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Lambda's own retries of a failed asynchronous invocation.
   * @default 2 (Lambda's default)
   */
  readonly retryAttempts?: number;
  /**
   * How long Lambda keeps an asynchronous invocation it could not run yet (e.g. throttled).
   * @default Duration.hours(6) (Lambda's default)
   */
  readonly maxEventAge?: Duration;
  /**
   * X-Ray active tracing, and Powertools Tracer's subsegments for the SDK clients and the marketplace call.
   * @default true
   */
  readonly tracing?: boolean;
}

/**
 * One Lambda function of the service with the house defaults: Node.js 24 on ARM, bundled locally by
 * esbuild (no Docker) as minified ESM with source maps, an explicit log group with retention, and X-Ray
 * active tracing unless turned off.
 */
export class ServiceFunction extends Construct {
  public readonly function: NodejsFunction;
  public readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const spec = FUNCTIONS[props.name];
    const tracing = props.tracing ?? true;

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });

    this.function = new NodejsFunction(this, 'Function', {
      description: `Attention Queue ${props.name}`,
      entry: join(REPO_ROOT, spec.entry),
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: spec.memoryMb,
      timeout: Duration.seconds(spec.timeoutSeconds),
      environment: {
        ...functionEnvironment(props.name, props.environment),
        // Off means no Tracer subsegments, even where a caller still passes a trace header.
        [EnvNames.traceEnabled]: String(tracing),
      },
      tracing: tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      logGroup: this.logGroup,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      retryAttempts: props.retryAttempts,
      maxEventAge: props.maxEventAge,
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        minify: true,
        sourceMap: true,
        // File and line mapping is what --enable-source-maps needs; embedding sources would only grow the zip.
        sourcesContent: false,
        // Bundle the AWS SDK too: the versions tested locally are the versions deployed.
        externalModules: [],
        forceDockerBundling: false,
      },
    });
  }
}
