/**
 * The one seam through which tests make the platform fail where a real crash could: a named point between two
 * durable steps of a run (after an outbox commit, after one step of an enrollment or a client organization's
 * provisioning). When PLATFORM_TEST_FAULT names the point, the process is killed there with SIGKILL, as a power cut or
 * the kernel's OOM killer would end it, and the test then checks what a restart makes of the half-done run
 * (docs/testing.md). Unset, as in every deployment, a crash point does nothing.
 */
export function crashPoint(point: string): void {
  if (process.env.PLATFORM_TEST_FAULT === point) process.kill(process.pid, 'SIGKILL');
}
