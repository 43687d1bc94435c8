import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on loopback in front of an emulator, for fault injection: `down()` drops every open
 * connection and refuses new ones (as an unreachable endpoint does) until `up()`. The emulator itself
 * keeps running, so its state survives the outage.
 */
export interface FaultProxy {
  url: string;
  down(): void;
  up(): void;
  close(): Promise<void>;
}

export const startFaultProxy = async (target: string): Promise<FaultProxy> => {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let available = true;
  const server: Server = createServer((client) => {
    if (!available) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    down() {
      available = false;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    up() {
      available = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
};
