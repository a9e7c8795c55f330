import { ConfigError, loadConfig, serviceEnv } from './config';

describe('loadConfig', () => {
  it('applies defaults', () => {
    const c = loadConfig(serviceEnv, {});
    expect(c).toMatchObject({ DEPLOYMENT_TYPE: 'Hosted', BILLING_ENABLED: false, RUN_MODE: 'prod', GRPC_PORT: 50051 });
  });

  it('names every bad variable in one error', () => {
    try {
      loadConfig(serviceEnv, { DEPLOYMENT_TYPE: 'Cloudy', BILLING_ENABLED: 'yes', GRPC_PORT: '99999' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const msg = (err as Error).message;
      expect(msg).toContain('DEPLOYMENT_TYPE');
      expect(msg).toContain('BILLING_ENABLED');
      expect(msg).toContain('GRPC_PORT');
      expect(msg).not.toContain('RUN_MODE');
    }
  });

  it('reads booleans strictly and treats empty strings as unset', () => {
    expect(loadConfig(serviceEnv, { BILLING_ENABLED: 'true', DATABASE_URL: '' })).toMatchObject({
      BILLING_ENABLED: true,
      DATABASE_URL: undefined,
    });
    expect(() => loadConfig(serviceEnv, { DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
  });

  it("takes an installation's namespace on NATS that is one subject token, and refuses another with one line", () => {
    expect(loadConfig(serviceEnv, { BUS_NAMESPACE: 'eu-prod-2' }).BUS_NAMESPACE).toBe('eu-prod-2');
    expect(loadConfig(serviceEnv, {}).BUS_NAMESPACE).toBeUndefined();
    expect(() => loadConfig(serviceEnv, { BUS_NAMESPACE: 'eu.prod' })).toThrow(
      'invalid configuration: BUS_NAMESPACE: must be 1 to 40 lower-case letters, digits and dashes, starting with a letter',
    );
  });

  it('never repeats the value of a secret variable in its message', () => {
    const shape = { PLATFORM_ADMIN_PASSWORD: serviceEnv.GRPC_PORT, DATABASE_URL: serviceEnv.DATABASE_URL };
    try {
      loadConfig(shape, { PLATFORM_ADMIN_PASSWORD: 'hunter2-secret', DATABASE_URL: 'mysql://u:p4ss@h/db' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      const msg = (err as Error).message;
      expect(msg).toContain('PLATFORM_ADMIN_PASSWORD');
      expect(msg).not.toContain('hunter2');
      expect(msg).not.toContain('p4ss');
    }
  });
});
