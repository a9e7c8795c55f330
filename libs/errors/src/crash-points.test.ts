import { crashPoint } from './crash-points';

describe('crashPoint', () => {
  const saved = process.env.PLATFORM_TEST_FAULT;
  afterEach(() => {
    if (saved === undefined) delete process.env.PLATFORM_TEST_FAULT;
    else process.env.PLATFORM_TEST_FAULT = saved;
    jest.restoreAllMocks();
  });

  it('kills the process with SIGKILL at the point PLATFORM_TEST_FAULT names, and nowhere else', () => {
    const kill = jest.spyOn(process, 'kill').mockImplementation(() => true);
    process.env.PLATFORM_TEST_FAULT = 'outbox-after-commit';
    crashPoint('client-org-after-org');
    expect(kill).not.toHaveBeenCalled();
    crashPoint('outbox-after-commit');
    expect(kill).toHaveBeenCalledWith(process.pid, 'SIGKILL');
  });

  it('does nothing when PLATFORM_TEST_FAULT is unset', () => {
    const kill = jest.spyOn(process, 'kill').mockImplementation(() => true);
    delete process.env.PLATFORM_TEST_FAULT;
    crashPoint('outbox-after-commit');
    expect(kill).not.toHaveBeenCalled();
  });
});
