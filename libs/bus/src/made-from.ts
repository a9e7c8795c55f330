/**
 * A value a reader makes from kept answers (a large answer rendered from them: its JSON), made once while they stay
 * the same. Kept answers are frozen (NoticeCache.keep), so the same objects mean the same content, and the value is
 * remembered beside the first of them (a WeakMap): it goes when the read model lets that answer go, and is made again
 * as soon as any input is another object, as after a notice. So it has no freshness rule of its own: it is exactly as
 * fresh as the read models it comes from. Inputs are kept answers (objects) or plain values (compared by value); when an
 * object among them is not frozen (an answer asked afresh, not kept), the value is made every time.
 */
export function madeFrom<T>(): (inputs: readonly [object, ...unknown[]], make: () => T) => T {
  const made = new WeakMap<object, { inputs: readonly unknown[]; value: T }>();
  return (inputs, make) => {
    if (!inputs.every((x) => x === null || typeof x !== 'object' || Object.isFrozen(x))) return make();
    const found = made.get(inputs[0]);
    if (found && found.inputs.length === inputs.length && found.inputs.every((x, i) => x === inputs[i])) return found.value;
    const value = make();
    made.set(inputs[0], { inputs: [...inputs], value });
    return value;
  };
}
