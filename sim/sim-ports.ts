import type {
  AttentionPublisher,
  Clock,
  DeliveryLog,
  DispatchState,
  IdGenerator,
  Marketplace,
  QueueAdmin,
  StoreRegistry,
  TaskQueues,
} from '../lambdas/core/ports.js';
import type { Actor } from './scheduler.js';
import type { SimTelemetry } from './sim-telemetry.js';

/** The ports every actor's core use case gets. */
export interface CommonDeps {
  dispatch: DispatchState;
  attention: AttentionPublisher;
  clock: Clock;
  ids: IdGenerator;
  telemetry: SimTelemetry;
}

/** How an actor gets its ports: each bound to the actor, so every call is one of its scheduled operations. */
export interface SimPorts {
  common(actor: Actor): CommonDeps;
  stores(actor: Actor): StoreRegistry;
  tasks(actor: Actor): TaskQueues;
  deliveries(actor: Actor): DeliveryLog;
  marketplace(actor: Actor): Marketplace;
  queueAdmin(actor: Actor): QueueAdmin;
}
