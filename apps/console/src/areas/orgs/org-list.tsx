import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'react-router';
import type { Schema } from '../../api/client';
import { Field, Form, Section, Select, Show, Table, useAction, useNothingDoneYet } from '../../ui';
import { fetchMyOrgs, orgKeys, useCreateOrg } from './api';
import { lengthProblem, loginProblem, text } from './names';
import { Pager } from './paging';

const PAGE_SIZE = 20;

/** Request strings of the one visibility setting (docs/organizations-and-teams.md), as the spec names them. */
export const VISIBILITIES: [string, string][] = [
  ['public', 'Public: everyone'],
  ['limited', 'Limited: signed-in users'],
  ['private', 'Private: members only'],
];

export function orgPath(name: string): string {
  return `/orgs/${encodeURIComponent(name)}`;
}

/** `/orgs`: the caller's organizations (the API pages them) and a form to create one. */
export function OrgList() {
  const [page, setPage] = useState(1);
  const orgs = useQuery({ queryKey: orgKeys.mine(page), queryFn: () => fetchMyOrgs(page, PAGE_SIZE) });
  // What the screen that led here did (an organization deleted on its settings), until something is done here.
  const done = (useLocation().state as { done?: unknown } | null)?.done;
  const nothingDoneYet = useNothingDoneYet();
  return (
    <>
      <h1>My organizations</h1>
      {typeof done === 'string' && nothingDoneYet && (
        <p role="status" className="done">
          {done}
        </p>
      )}
      <Section title="Organizations">
        <Show loaded={orgs}>
          {({ items, total }) => (
            <>
              <Table<Schema<'Organization'>>
                caption={`Your organizations (${total})`}
                rows={items}
                rowKey={(o) => o.id}
                pageSize={PAGE_SIZE}
                empty="you are in none yet; create one below."
                columns={[
                  { header: 'Name', cell: (o) => <Link to={orgPath(o.username)}>{o.username}</Link> },
                  { header: 'Full name', cell: (o) => o.full_name || '—' },
                  { header: 'Visibility', cell: (o) => o.visibility || 'public' },
                  { header: 'Description', cell: (o) => o.description || '—' },
                ]}
              />
              <Pager label="Your organizations" page={page} limit={PAGE_SIZE} total={total} onPage={setPage} />
            </>
          )}
        </Show>
      </Section>
      <CreateOrg />
    </>
  );
}

function CreateOrg() {
  const action = useAction();
  const creation = useCreateOrg();
  const [created, setCreated] = useState<string>();
  return (
    <Section title="Create organization">
      <Form
        action={action}
        label="Create organization"
        submitLabel="Create organization"
        validate={(data) =>
          loginProblem('Organization name', text(data, 'username')) ??
          lengthProblem('Full name', text(data, 'full_name'), 100) ??
          lengthProblem('Description', text(data, 'description'))
        }
        submit={async (data) => {
          const org = await creation.mutateAsync({
            username: text(data, 'username'),
            full_name: text(data, 'full_name'),
            description: text(data, 'description'),
            visibility: text(data, 'visibility'),
          });
          setCreated(org.username);
          return `Created organization ${org.username}; you are its owner.`;
        }}
      >
        <Field label="Organization name" name="username" required hint="Letters, digits, . _ - inside; at most 40" autoComplete="off" />
        <Field label="Full name" name="full_name" />
        <Field label="Description" name="description" />
        <Select label="Visibility" name="visibility" options={VISIBILITIES} defaultValue="public" />
      </Form>
      {/* The way to the new organization is part of the creation's outcome, and goes with it. */}
      {created && action.done && (
        <p>
          <Link to={orgPath(created)}>Open {created}</Link>
        </p>
      )}
    </Section>
  );
}
