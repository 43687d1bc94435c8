import { Command, CommanderError } from 'commander';
import { ApiClient } from './client.js';
import { registerCampaigns } from './commands/campaigns.js';
import { registerStores } from './commands/stores.js';
import { registerTasks } from './commands/tasks.js';
import { registerTokens } from './commands/tokens.js';
import type { CliContext } from './context.js';
import { resolveEndpoint, type StackOutputReader } from './endpoint.js';
import { CliError } from './errors.js';
import type { ProgressStream } from './progress.js';
import { RequestSigner, resolveRegion } from './sigv4.js';

/** The process around the CLI, injectable so tests run it in-process against local mode. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: ProgressStream;
  env: NodeJS.ProcessEnv;
  readOutputs?: StackOutputReader;
  signer?: (region: string) => RequestSigner;
  fetch?: typeof fetch;
}

interface GlobalOptions {
  endpoint?: string;
  stack?: string;
  json?: boolean;
}

export const buildProgram = (io: CliIo): Command => {
  const program = new Command('aq')
    .description(
      'Operate an Attention Queue: local mode (http, ADMIN_TOKEN) or a deployed stack (https, SigV4)',
    )
    .option('--endpoint <url>', 'API base URL (default $AQ_ENDPOINT, else http://localhost:3000)')
    .option('--stack <name>', "read the endpoint from this CloudFormation stack's ApiUrl output")
    .option('--json', 'machine-readable output on stdout')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: (text) => io.stderr.write(text) });
  let client: Promise<ApiClient> | undefined;
  const ctx = (): CliContext => {
    const options = program.opts<GlobalOptions>();
    return {
      json: options.json === true,
      stdout: io.stdout,
      stderr: io.stderr,
      client: () =>
        (client ??= resolveEndpoint(options, io.env, io.readOutputs).then(
          (endpoint) =>
            new ApiClient({
              endpoint,
              env: io.env,
              signer: () => {
                const region = resolveRegion(endpoint.hostname, io.env);
                return io.signer ? io.signer(region) : new RequestSigner(region);
              },
              ...(io.fetch ? { fetch: io.fetch } : {}),
            }),
        )),
    };
  };
  registerStores(program, ctx);
  registerCampaigns(program, ctx);
  registerTokens(program, ctx);
  registerTasks(program, ctx);
  for (const command of program.commands)
    command.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: (t) => io.stderr.write(t) });
  return program;
};

/** Runs one command line (argv without node and the script); resolves to the exit code. */
export const runCli = async (args: readonly string[], io: CliIo): Promise<number> => {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...args], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof CliError) {
      io.stderr.write(`aq: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr.write(`aq: ${(error as Error).message ?? String(error)}\n`);
    return 1;
  }
};
