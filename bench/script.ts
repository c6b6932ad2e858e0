/**
 * Runs a bench script's `main` and ends the process: 0 when it resolves, 1 with the error printed
 * when it rejects. A script's servers and sessions may still hold the event loop when it is done.
 */
export function runToExit(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
