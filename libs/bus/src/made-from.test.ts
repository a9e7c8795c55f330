import { madeFrom } from './made-from';
import { deepFreeze } from './notice-cache';

describe('madeFrom', () => {
  it('makes a value once while its kept inputs stay the same objects and values', () => {
    const made = madeFrom<string>();
    const answer = deepFreeze({ users: [{ id: 1 }] });
    const names = deepFreeze({ teams: ['devs'] });
    let makes = 0;
    const make = () => `${++makes}`;
    expect(made([answer, names, 'alice'], make)).toBe('1');
    expect(made([answer, names, 'alice'], make)).toBe('1');
    expect(makes).toBe(1);
  });

  it('makes it again when any input is another object or another value', () => {
    const made = madeFrom<string>();
    const answer = deepFreeze({ users: [{ id: 1 }] });
    let makes = 0;
    const make = () => `${++makes}`;
    made([answer, deepFreeze({ teams: ['devs'] }), 'alice'], make);
    expect(made([answer, deepFreeze({ teams: ['devs'] }), 'alice'], make)).toBe('2');
    const names = deepFreeze({ teams: ['builders'] });
    made([answer, names, 'alice'], make);
    expect(made([answer, names, 'alicia'], make)).toBe('4');
    expect(made([answer, names], make)).toBe('5');
  });

  it('makes it every time from an answer that is not kept (not frozen)', () => {
    const made = madeFrom<string>();
    const asked = { users: [] };
    let makes = 0;
    const make = () => `${++makes}`;
    made([asked], make);
    made([asked], make);
    made([deepFreeze({}), { not: 'kept' }], make);
    expect(made([deepFreeze({}), { not: 'kept' }], make)).toBe('4');
  });
});
