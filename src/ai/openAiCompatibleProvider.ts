// A client of the OpenAI chat-completions protocol (`POST {base}/chat/completions`), which hosted
// services and local servers (llama.cpp, vLLM, Ollama, LM Studio…) speak alike. It asks for a JSON
// object at temperature 0 within `max_tokens`, and trusts nothing it gets back: the envelope, the
// usage and the model's JSON are checked against schemas, and an answer over 64 KiB is refused.
import Ajv2020Module from 'ajv/dist/2020.js';
import { draftTasksPrompt, projectSummaryPrompt, promptBound, readDraftsAnswer, readSummaryAnswer, type ChatPrompt } from './prompts.js';
import { AiProviderFailure, type AiProvider, type PreparedAiCall } from './provider.js';
import { scrubText } from '../logScrubber.js';
import { readBodyAtMost } from '../responseBody.js';

export interface OpenAiCompatibleProviderOptions {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`, without a trailing slash. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set; local servers often need none. */
  apiKey: string | undefined;
  model: string;
  /** The whole exchange (connect, send, answer) must end within this time. */
  timeoutMs: number;
}

/** Larger answers are refused as malformed: no answer of these tasks needs more. */
export const MAX_ANSWER_BYTES = 64 * 1024;
const LOGGED_ERROR_BODY_CHARACTERS = 500;

/** Compiled on the first answer: servers that never call a model skip an Ajv of their own at start-up. */
function compileEnvelopeValidator() {
  return new Ajv2020Module.default({ strict: false, allErrors: false }).compile({
    type: 'object',
    required: ['choices', 'usage'],
    properties: {
      choices: {
        type: 'array',
        minItems: 1,
        items: { type: 'object', required: ['message'], properties: { message: { type: 'object', required: ['content'], properties: { content: { type: 'string' } } } } },
      },
      usage: {
        type: 'object',
        required: ['prompt_tokens', 'completion_tokens'],
        properties: { prompt_tokens: { type: 'integer', minimum: 0 }, completion_tokens: { type: 'integer', minimum: 0 } },
      },
    },
  });
}

let envelopeValidator: ReturnType<typeof compileEnvelopeValidator> | undefined;

interface ChatCompletion {
  choices: { message: { content: string } }[];
  usage: { prompt_tokens: number; completion_tokens: number };
}

export function createOpenAiCompatibleProvider(options: OpenAiCompatibleProviderOptions): AiProvider {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;

  function chatCall<Result>(prompt: ChatPrompt, read: (answer: unknown) => Result): PreparedAiCall<Result> {
    return {
      bound: promptBound(prompt),
      async run() {
        const completion = await complete(prompt);
        const usage = { promptTokens: completion.usage.prompt_tokens, completionTokens: completion.usage.completion_tokens };
        // From here on the provider has answered, and billed what it reports.
        try {
          let answer: unknown;
          try {
            answer = JSON.parse(withoutCodeFence(completion.choices[0]!.message.content));
          } catch (error) {
            throw new AiProviderFailure('malformed-answer', 'the model answered text that is not JSON', { cause: error });
          }
          return { result: read(answer), usage };
        } catch (error) {
          if (error instanceof AiProviderFailure) throw error.chargedAs({ kind: 'usage', usage });
          throw error;
        }
      },
    };
  }

  async function complete(prompt: ChatPrompt): Promise<ChatCompletion> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    const timedOut = () => new AiProviderFailure('timeout', `no answer from ${endpoint} within ${options.timeoutMs} ms`);
    const readAnswer = (response: Response) =>
      readBodyAtMost(response, MAX_ANSWER_BYTES).catch((error: unknown) => {
        if (controller.signal.aborted) throw timedOut();
        throw new AiProviderFailure('unreachable', 'the connection broke while the answer was read', { cause: error });
      });
    try {
      let response: Response;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({
            model: options.model,
            messages: prompt.messages,
            max_tokens: prompt.maxTokens,
            temperature: 0,
            response_format: { type: 'json_object' },
          }),
          signal: controller.signal,
          redirect: 'manual',
        });
      } catch (error) {
        // The request went out and no answer came in time: the provider may have run it, and billed it.
        if (controller.signal.aborted) throw timedOut().chargedAs({ kind: 'bound' });
        throw new AiProviderFailure('unreachable', `${endpoint} could not be reached`, { cause: error });
      }
      if (response.status < 200 || response.status > 299) {
        const body = await readAnswer(response).catch(() => undefined);
        const excerpt = body === undefined ? '(unreadable or over 64 KiB)' : scrubText(body.toString('utf8'), [options.apiKey]).slice(0, LOGGED_ERROR_BODY_CHARACTERS);
        throw new AiProviderFailure('status', `${endpoint} answered ${response.status}: ${excerpt}`);
      }
      // A success status: whatever goes wrong now, the call was run and billed, by usage we cannot read.
      try {
        const body = await readAnswer(response);
        if (body === undefined) throw new AiProviderFailure('malformed-answer', `the answer is over ${MAX_ANSWER_BYTES} bytes`);
        let envelope: unknown;
        try {
          envelope = JSON.parse(body.toString('utf8'));
        } catch (error) {
          throw new AiProviderFailure('malformed-answer', 'the answer is not JSON', { cause: error });
        }
        const validateEnvelope = (envelopeValidator ??= compileEnvelopeValidator());
        if (!validateEnvelope(envelope)) {
          throw new AiProviderFailure('malformed-answer', `the answer is not a chat completion with usage: ${JSON.stringify(validateEnvelope.errors)}`);
        }
        return envelope as ChatCompletion;
      } catch (error) {
        if (error instanceof AiProviderFailure) throw error.chargedAs({ kind: 'bound' });
        throw error;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    model: options.model,
    draftTasks: (input) => chatCall(draftTasksPrompt(input), (answer) => readDraftsAnswer(answer, input.maxDrafts)),
    summarizeProject: (input) => chatCall(projectSummaryPrompt(input), (answer) => readSummaryAnswer(answer, input)),
  };
}

/** Some servers wrap JSON in a Markdown code fence even when asked for a JSON object. */
function withoutCodeFence(content: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/u.exec(content);
  return fenced ? fenced[1]! : content;
}
