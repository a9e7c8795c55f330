import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../../api/client';
import { useSession } from '../../session';
import { ConfirmButton } from '../../ui/controls';
import { ErrorMessage, Section, Show, Table, instant, when } from '../../ui';

type Session = Schema<'Session'>;

/** The user's console sessions: the client and address that began each, its last use; this one marked; revoke. */
export function AccountSessions() {
  const client = useQueryClient();
  const { ended } = useSession();
  const sessions = useQuery({ queryKey: ['account', 'sessions'], queryFn: () => ok(api.GET('/user/sessions')) });
  const revoke = useMutation({
    mutationFn: async (s: Session) => {
      await ok(api.DELETE('/user/sessions/{id}', { params: { path: { id: s.id } } }));
      return s;
    },
    onSuccess: (s) => {
      // Ending this very session signs this browser out.
      if (s.current) ended();
      else void client.invalidateQueries({ queryKey: ['account', 'sessions'] });
    },
  });
  return (
    <Section title="Sessions">
      <p className="muted">Browsers signed in to your account. Revoking one signs it out on its next request.</p>
      <Show loaded={sessions}>
        {(rows) => (
          <Table
            caption="Signed-in sessions"
            rows={rows}
            rowKey={(s) => s.id}
            empty="None (you are signed in with an access token)."
            columns={[
              { header: 'Client', cell: (s) => <>{s.user_agent || 'unknown client'}{s.current && <strong className="tag"> this session</strong>}</> },
              { header: 'Address', cell: (s) => s.address || '—' },
              { header: 'Signed in', cell: (s) => when(s.created_at), value: (s) => instant(s.created_at) },
              { header: 'Last used', cell: (s) => when(s.last_used_at), value: (s) => instant(s.last_used_at) },
              {
                header: 'Actions',
                cell: (s) => (
                  <ConfirmButton
                    label={s.current ? 'Sign out this session' : 'Revoke'}
                    confirmLabel={s.current ? 'Confirm sign-out' : 'Confirm revoke'}
                    busy={revoke.isPending}
                    onConfirm={() => revoke.mutate(s)}
                  />
                ),
              },
            ]}
          />
        )}
      </Show>
      <ErrorMessage error={revoke.error} />
    </Section>
  );
}
