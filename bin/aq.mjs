#!/usr/bin/env node
// The `aq` CLI (package.json "bin"): TypeScript run through tsx's loader, so `npx aq` needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('./aq/main.ts');
