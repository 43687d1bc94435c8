import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: process.stderr,
  env: process.env,
});
