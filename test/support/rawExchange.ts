import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** How many answers the connection carried before the server closed it. */
  answers: number;
}

/**
 * Writes `chunks` to a new connection to `baseUrl` (pausing `pauseMs` before the last; the last is
 * held open) and reads until the server closes it: the last answer, parsed, for requests Node's
 * parser must see as they are (bad heads, slow bodies), which no HTTP client sends.
 */
export function rawExchange(baseUrl: string, chunks: string[], pauseMs = 0): Promise<RawAnswer> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const answers = received.split(/(?=HTTP\/1\.1 \d{3} )/);
      const last = answers.at(-1) ?? '';
      const [head = '', body = ''] = last.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined, answers: answers.length });
    });
    socket.on('connect', async () => {
      for (const [index, chunk] of chunks.entries()) {
        if (index === chunks.length - 1 && pauseMs > 0) await new Promise((done) => setTimeout(done, pauseMs));
        socket.write(chunk);
      }
    });
  });
}
