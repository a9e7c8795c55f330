import { holderLogins } from '../src/licenses/registration';

// The logins a license holder's account may have (docs/licensing.md, Registration).
describe('holderLogins', () => {
  it('answers the local part made a login, then the same with a digest of the whole email', () => {
    const [first, second] = holderLogins('Dana.Ops@Customer.example');
    expect(first).toBe('dana.ops');
    expect(second).toMatch(/^dana\.ops-[0-9a-f]{8}$/);
    // The digest is of the email, case aside: one holder, one second login; another domain, another one.
    expect(holderLogins('dana.ops@customer.example')[1]).toBe(second);
    expect(holderLogins('dana.ops@elsewhere.example')[1]).not.toBe(second);
  });

  it('makes any local part a login within 40 characters', () => {
    expect(holderLogins('a+b c@x.io')[0]).toBe('a-b-c');
    expect(holderLogins('..__--@x.io')[0]).toBe('license-holder');
    expect(holderLogins('-.-@x.io')[1]).toMatch(/^license-holder-[0-9a-f]{8}$/);
    const long = holderLogins(`${'x'.repeat(60)}@x.io`);
    expect(long[0]).toHaveLength(40);
    expect(long[1]).toHaveLength(40);
  });
});
