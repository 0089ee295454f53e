// The one way a feature runs work in the background while the app is up (a poller, a worker, a
// timer, a subscription): it hands a BackgroundService to the app's list, which starts them in the
// order added once the app is ready (before it listens, or before the first injected request) and
// stops them in reverse when it begins to close, so a service stops before those it relies on.
export interface BackgroundService {
  /** names the service in the log line of a failed stop */
  readonly name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

export class BackgroundServices {
  private readonly services: BackgroundService[] = [];
  private readonly started: BackgroundService[] = [];

  add(service: BackgroundService): void {
    this.services.push(service);
  }

  /** Starts each service in turn; a failure stops the start there (what started is stopped by `stop`). */
  async start(): Promise<void> {
    for (const service of this.services) {
      if (this.started.includes(service)) continue;
      await service.start();
      this.started.push(service);
    }
  }

  /** Stops what started, last first; a service that fails to stop does not keep the others running. */
  async stop(failed: (name: string, err: unknown) => void): Promise<void> {
    while (this.started.length > 0) {
      const service = this.started.pop()!;
      try {
        await service.stop();
      } catch (err) {
        failed(service.name, err);
      }
    }
  }
}
