/** A worker's side of the register: one HTTP request per guarded operation, on a kept-alive connection. */
import * as http from 'node:http';
import type { RegisterReply, RegisterRequest } from './register';

export class RegisterClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

  constructor(private readonly port: number) {}

  /** Sends one operation; rejects only when the register cannot be reached (never a fault of the run). */
  call(request: RegisterRequest): Promise<RegisterReply> {
    const body = JSON.stringify(request);
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: this.port, method: 'POST', path: '/op', agent: this.agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            if (res.statusCode !== 200) reject(new Error(`register answered ${res.statusCode}: ${text}`));
            else resolve(JSON.parse(text) as RegisterReply);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
