/**
 * The nemesis's helper that expires a session on the server, in a process of its own: the native
 * client it uses can abort its whole process, and must not take the runner (and the run's history)
 * down with it. Started with the credentials as JSON; prints `{"attaching":true,"at":…}` when it
 * starts, then `{"expired":true,"at":…}` (when, on the run's clock, the server confirmed the expiry) or
 * `{"expired":false,"error":"…"}` and exits.
 */
import { expireSession } from '../src/testing';
import { now } from './history';

async function main(): Promise<void> {
  const { connectString, sessionId, sessionPassword } = JSON.parse(process.argv[2] ?? '{}') as { connectString: string; sessionId: string; sessionPassword: string };
  process.stdout.write(`${JSON.stringify({ attaching: true, at: now() })}\n`);
  await expireSession({ connectString, sessionId: BigInt(sessionId), sessionPassword }, 20_000);
}

if (require.main === module) {
  main().then(
    () => {
      process.stdout.write(`${JSON.stringify({ expired: true, at: now() })}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stdout.write(`${JSON.stringify({ expired: false, error: String(err) })}\n`);
      process.exit(1);
    },
  );
}
