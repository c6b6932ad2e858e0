/**
 * The nemesis's helper that expires a session on the server, in a process of its own: the native
 * client it uses can abort its whole process, and must not take the runner (and the run's history)
 * down with it. Started with the credentials as JSON; prints `{"expired":true}` or
 * `{"expired":false,"error":"…"}` and exits.
 */
import { expireSession } from '../src/testing';

async function main(): Promise<void> {
  const { connectString, sessionId, sessionPassword } = JSON.parse(process.argv[2] ?? '{}') as { connectString: string; sessionId: string; sessionPassword: string };
  await expireSession({ connectString, sessionId: BigInt(sessionId), sessionPassword }, 20_000);
}

if (require.main === module) {
  main().then(
    () => {
      process.stdout.write(`${JSON.stringify({ expired: true })}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stdout.write(`${JSON.stringify({ expired: false, error: String(err) })}\n`);
      process.exit(1);
    },
  );
}
