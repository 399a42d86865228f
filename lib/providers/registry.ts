// Providers by name. Settings (host, port, rate limit, settle window, allowed hosts) come from
// configuration: LEDGER_PROVIDERS (inline JSON) or LEDGER_PROVIDERS_FILE (a JSON file). Secrets come
// only from the environment (SMTP_USER / SMTP_PASSWORD, WEBHOOK_SIGNING_SECRET) through lib/env.ts,
// never from the configuration file and never from the database.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { env } from '../env.ts';
import type { Provider, ProviderSettingsBase } from './types.ts';
import { SmtpProvider, type SmtpSettings } from './smtp/index.ts';
import { WebhookProvider, type WebhookSettings } from './webhook/index.ts';
import { webhookSecretProblem } from './webhook/secret.ts';

export type RegisteredProvider = Provider & { close?(): void | Promise<void> };

const base = {
  rateLimitPerSecond: z.number().positive().optional(),
  settleWindowSeconds: z.number().int().nonnegative().optional(),
  sendTimeoutSeconds: z.number().positive().optional(),
};
const smtpSchema = z.strictObject({
  ...base,
  type: z.literal('smtp'),
  host: z.string().min(1),
  port: z.number().int().positive(),
  secure: z.boolean().optional(),
  ignoreTLS: z.boolean().optional(),
  from: z.email(),
  messageIdDomain: z.string().optional(),
  maxConnections: z.number().int().positive().optional(),
  timeoutSeconds: z.number().positive().optional(),
  lookupUrl: z.url().optional(),
});
const webhookSchema = z.strictObject({
  ...base,
  type: z.literal('webhook'),
  /** Endpoints: a host name or IP literal, optionally with a port ("hooks.example.com", "10.0.0.5:8443"). */
  allowedHosts: z.record(
    z.string(),
    z.array(
      z
        .string()
        .regex(
          /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/,
          'an allowed host is a host name or IP, optionally with ":port" (no scheme, path or wildcard)',
        ),
    ),
  ),
  timeoutSeconds: z.number().positive().optional(),
  receiptHeader: z.string().optional(),
  lookupUrl: z.url().optional(),
});
// Other types only: a malformed smtp or webhook entry must fail its own schema, not pass as "other".
const otherSchema = z.looseObject({
  ...base,
  type: z
    .string()
    .min(1)
    .refine((t) => t !== 'smtp' && t !== 'webhook', 'see the smtp or webhook settings'),
});
export const providersConfigSchema = z.record(z.string(), z.union([smtpSchema, webhookSchema, otherSchema]));
export type ProvidersConfig = z.input<typeof providersConfigSchema>;

export interface ProviderSecrets {
  smtpUser?: string;
  smtpPassword?: string;
  webhookSecret?: string;
}

/** Other provider types (the sandbox) plug in here: type -> factory. */
export type ProviderFactory = (name: string, settings: Record<string, unknown>) => RegisteredProvider;
const factories = new Map<string, ProviderFactory>();
export function registerProviderType(type: string, factory: ProviderFactory): void {
  factories.set(type, factory);
}

export class ProviderRegistry {
  private readonly instances = new Map<string, RegisteredProvider>();
  private readonly settingsByName: Record<string, ProviderSettingsBase & { type: string }>;

  constructor(
    config: ProvidersConfig,
    private readonly secrets: ProviderSecrets = {},
    extra: Record<string, RegisteredProvider> = {},
  ) {
    this.settingsByName = providersConfigSchema.parse(config) as Record<
      string,
      ProviderSettingsBase & { type: string }
    >;
    for (const [name, provider] of Object.entries(extra)) this.instances.set(name, provider);
    // Refused where it is configured, not at the first delivery: a secret receivers cannot verify.
    const webhooks = Object.keys(this.settingsByName).filter((n) => this.settingsByName[n]!.type === 'webhook');
    const problem = secrets.webhookSecret === undefined ? null : webhookSecretProblem(secrets.webhookSecret);
    if (webhooks.length > 0 && problem) throw new Error(`webhook providers ${webhooks.join(', ')}: ${problem}`);
  }

  names(): string[] {
    return [...new Set([...Object.keys(this.settingsByName), ...this.instances.keys()])];
  }

  has(name: string): boolean {
    return this.instances.has(name) || name in this.settingsByName;
  }

  settings(name: string): ProviderSettingsBase {
    return this.settingsByName[name] ?? {};
  }

  get(name: string): RegisteredProvider {
    const hit = this.instances.get(name);
    if (hit) return hit;
    const settings = this.settingsByName[name];
    if (!settings) throw new Error(`provider "${name}" is not configured (LEDGER_PROVIDERS)`);
    const provider = this.build(name, settings);
    this.instances.set(name, provider);
    return provider;
  }

  private build(name: string, settings: ProviderSettingsBase & { type: string }): RegisteredProvider {
    switch (settings.type) {
      case 'smtp': {
        const s = settings as SmtpSettings;
        const auth = this.secrets.smtpUser
          ? { user: this.secrets.smtpUser, pass: this.secrets.smtpPassword ?? '' }
          : undefined;
        return new SmtpProvider(name, { ...s, auth });
      }
      case 'webhook':
        return new WebhookProvider(name, {
          ...(settings as Omit<WebhookSettings, 'secret'>),
          secret: this.secrets.webhookSecret ?? '',
        } as WebhookSettings);
      default: {
        const factory = factories.get(settings.type);
        if (!factory) throw new Error(`provider "${name}": unknown type "${settings.type}"`);
        return factory(name, settings as unknown as Record<string, unknown>);
      }
    }
  }

  async close(): Promise<void> {
    for (const p of this.instances.values()) await p.close?.();
    this.instances.clear();
  }
}

/** The registry from configuration and environment. */
export function providerRegistryFromEnv(extra: Record<string, RegisteredProvider> = {}): ProviderRegistry {
  const e = env();
  const raw = e.LEDGER_PROVIDERS ?? (e.LEDGER_PROVIDERS_FILE ? readFileSync(e.LEDGER_PROVIDERS_FILE, 'utf8') : '{}');
  let config: ProvidersConfig;
  try {
    config = JSON.parse(raw) as ProvidersConfig;
  } catch (error) {
    throw new Error(`provider configuration is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return new ProviderRegistry(
    config,
    { smtpUser: e.SMTP_USER, smtpPassword: e.SMTP_PASSWORD, webhookSecret: e.WEBHOOK_SIGNING_SECRET },
    extra,
  );
}
