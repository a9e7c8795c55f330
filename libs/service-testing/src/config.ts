import { loadConfig, serviceEnv, type ServiceConfig } from '@platform/service-kit';

/** A service config for tests: free ports, quiet logs, plus the given variables. */
export function testServiceConfig(env: Record<string, string | undefined> = {}): ServiceConfig {
  return loadConfig(serviceEnv, { GRPC_PORT: '0', LOG_LEVEL: 'silent', ...env });
}
