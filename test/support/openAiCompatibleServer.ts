// A real HTTP server on port 0 that speaks the OpenAI chat-completions protocol
// (`POST /v1/chat/completions`), for the tests of the openai-compatible provider. Each test says
// how it answers: normally (a JSON answer of its choosing, with the usage it says), held until
// released (slow), with an error status (one may echo the key it was sent), with a body that is
// not a chat completion, larger than the provider accepts, or by cutting the connection.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ChatRequest {
  headers: IncomingMessage['headers'];
  body: {
    model: string;
    messages: { role: string; content: string }[];
    max_tokens: number;
    temperature: number;
    response_format: { type: string };
  };
}

/** `bound`: exactly the most the server's caller reserves for (the bytes of the messages' JSON, and `max_tokens`). */
export type UsageReport = 'bound' | { prompt_tokens: number; completion_tokens: number } | 'none';

export type ChatBehaviour =
  | { kind: 'answer'; content?: string | ((request: ChatRequest) => string); usage?: UsageReport }
  /** Answers only when `releaseHeld()` is called (then as `answer` with the defaults), or never. */
  | { kind: 'hold' }
  | { kind: 'status'; status: number; body: string }
  /** An error status whose body echoes the Authorization header and key it was sent, then the `planted` secrets (what the log must never show). */
  | { kind: 'echo-credentials'; status: number; planted?: string[] }
  /** A 200 whose body is this text as it is. */
  | { kind: 'raw'; body: string }
  | { kind: 'oversized'; bytes: number }
  | { kind: 'reset' };

export interface OpenAiCompatibleServer {
  /** The API base to configure as AI_BASE_URL, ending in `/v1`. */
  baseUrl: string;
  /** Every chat request received, in order. */
  requests: ChatRequest[];
  respondWith(behaviour: ChatBehaviour): void;
  /** Answers every held request (as `answer` with the default content and the `bound` usage). */
  releaseHeld(): void;
  /** Resolves once `count` requests have been received in all. */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

/** A valid answer for whichever task the request is: a draft, or an empty-highlight summary. */
export function defaultContent(request: ChatRequest): string {
  const system = request.body.messages[0]?.content ?? '';
  if (system.includes('"drafts"')) return JSON.stringify({ drafts: [{ title: 'Call the printer', priority: 'HIGH', dueOn: '2026-12-01' }] });
  return JSON.stringify({ summary: 'The work is on track.', highlights: [] });
}

export function usageOf(request: ChatRequest, report: UsageReport): { prompt_tokens: number; completion_tokens: number } | undefined {
  if (report === 'none') return undefined;
  if (report === 'bound') return { prompt_tokens: Buffer.byteLength(JSON.stringify(request.body.messages), 'utf8'), completion_tokens: request.body.max_tokens };
  return report;
}

export async function startOpenAiCompatibleServer(): Promise<OpenAiCompatibleServer> {
  let behaviour: ChatBehaviour = { kind: 'answer' };
  const requests: ChatRequest[] = [];
  const held: { request: ChatRequest; response: ServerResponse }[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();

  const answer = (response: ServerResponse, request: ChatRequest, content: string, usage: UsageReport) => {
    const reported = usageOf(request, usage);
    const completion = {
      id: `chatcmpl-${requests.length}`,
      object: 'chat.completion',
      created: 1_790_000_000,
      model: request.body.model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      ...(reported ? { usage: { ...reported, total_tokens: reported.prompt_tokens + reported.completion_tokens } } : {}),
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
  };

  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      if (incoming.method !== 'POST' || incoming.url !== '/v1/chat/completions') {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const request: ChatRequest = { headers: incoming.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
      requests.push(request);
      for (const waiter of waiters.filter((candidate) => requests.length >= candidate.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const current = behaviour;
      switch (current.kind) {
        case 'answer': {
          const content = typeof current.content === 'function' ? current.content(request) : (current.content ?? defaultContent(request));
          answer(response, request, content, current.usage ?? 'bound');
          return;
        }
        case 'hold':
          held.push({ request, response });
          return;
        case 'status':
          response.writeHead(current.status, { 'content-type': 'application/json' }).end(current.body);
          return;
        case 'echo-credentials': {
          const sent = request.headers.authorization ?? '';
          const key = sent.replace(/^Bearer /, '');
          const message = `Incorrect API key provided: ${key}. Header was ${sent}; key=${sent}`;
          response.writeHead(current.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, planted: current.planted ?? [] } }));
          return;
        }
        case 'raw':
          response.writeHead(200, { 'content-type': 'application/json' }).end(current.body);
          return;
        case 'oversized':
          response.writeHead(200, { 'content-type': 'application/json' }).end(`{"padding":"${'x'.repeat(current.bytes)}"}`);
          return;
        case 'reset':
          incoming.socket.destroy();
          return;
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    respondWith(next) {
      behaviour = next;
    },
    releaseHeld() {
      for (const { request, response } of held.splice(0)) answer(response, request, defaultContent(request), 'bound');
    },
    received(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
