import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen } from '../../test/render';
import { Form, Outcome, useAction, useNothingDoneYet } from '.';

/** A screen with a notice it was opened with, a form that succeeds, a form that fails and a button. */
function TwoForms() {
  const first = useAction();
  const second = useAction();
  const button = useAction();
  const nothingDoneYet = useNothingDoneYet();
  return (
    <>
      {nothingDoneYet && <p role="status">Opened with a notice.</p>}
      <Form action={first} label="First" submit={async () => 'First done.'}>
        <span />
      </Form>
      <Form
        action={second}
        label="Second"
        validate={(data) => (data.get('name') ? undefined : 'Name is required')}
        submit={() => Promise.reject(new Error('Second refused.'))}
      >
        <input name="name" aria-label="Name" />
      </Form>
      <button type="button" onClick={() => void button.run(async () => 'Button done.')}>
        Press
      </button>
      <Outcome action={button} />
    </>
  );
}

describe('messages belong to the last action', () => {
  it('shows only what the last action of the screen said, whichever form or button it was', async () => {
    renderScreen(<TwoForms />, { answers: {} });
    const [first, second] = [screen.getByRole('form', { name: 'First' }), screen.getByRole('form', { name: 'Second' })];
    expect(screen.getByRole('status').textContent).toBe('Opened with a notice.');

    fireEvent.submit(first);
    expect((await within(first).findByRole('status')).textContent).toBe('First done.');
    expect(screen.queryByText('Opened with a notice.')).toBeNull();

    // A problem found before sending is an action too: the success before it goes.
    fireEvent.submit(second);
    expect((await within(second).findByRole('alert')).textContent).toBe('Name is required');
    expect(within(first).queryByRole('status')).toBeNull();

    fireEvent.change(within(second).getByLabelText('Name'), { target: { value: 'x' } });
    fireEvent.submit(second);
    expect((await within(second).findByRole('alert')).textContent).toBe('Second refused.');

    fireEvent.click(screen.getByRole('button', { name: 'Press' }));
    expect((await screen.findByText('Button done.')).getAttribute('role')).toBe('status');
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.getAllByRole('status').map((s) => s.textContent)).toEqual(['Button done.']);
  });
});
