import type { AiConfig } from '../config.js';
import { createOfflineProvider } from './offlineProvider.js';
import { createOpenAiCompatibleProvider } from './openAiCompatibleProvider.js';
import type { AiProvider } from './provider.js';

/** The provider the configuration names (AI_PROVIDER): the offline rules by default. */
export function createAiProvider(config: AiConfig): AiProvider {
  if (config.provider === 'offline') return createOfflineProvider();
  return createOpenAiCompatibleProvider({ baseUrl: config.baseUrl, apiKey: config.apiKey, model: config.model, timeoutMs: config.timeoutMs });
}
