import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { ErrorMessage, Section, Table } from '../../ui';
import { Pager } from '../orgs/paging';
import { adminKeys, fetchAllOrgs, type Organization } from './admin-users-api';

// Every organization of the site, private ones too, for site admins; the page lives in the address (`?page=`).

const PAGE_SIZE = 20;

export default function AllOrgs() {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Math.trunc(Number(params.get('page'))) || 1);
  const orgs = useQuery({ queryKey: adminKeys.orgPage(page, PAGE_SIZE), queryFn: () => fetchAllOrgs(page, PAGE_SIZE), placeholderData: keepPreviousData });
  return (
    <>
      <h1>All organizations</h1>
      <Section title="Organizations">
        {orgs.error ? (
          <ErrorMessage error={orgs.error} />
        ) : !orgs.data ? (
          <p aria-busy="true">Loading…</p>
        ) : (
          <>
            <Table<Organization>
              caption={`All organizations (${orgs.data.total})`}
              rows={orgs.data.items}
              rowKey={(o) => o.id}
              pageSize={PAGE_SIZE}
              empty="none yet."
              columns={[
                { header: 'Name', cell: (o) => <Link to={`/orgs/${encodeURIComponent(o.username)}`}>{o.username}</Link> },
                { header: 'Full name', cell: (o) => o.full_name || '—' },
                { header: 'Visibility', cell: (o) => o.visibility || 'public' },
                { header: 'Description', cell: (o) => o.description || '—' },
                { header: 'ID', cell: (o) => o.id },
              ]}
            />
            <Pager label="All organizations" page={page} limit={PAGE_SIZE} total={orgs.data.total} onPage={(next) => setParams(next > 1 ? { page: String(next) } : {})} />
          </>
        )}
      </Section>
    </>
  );
}
