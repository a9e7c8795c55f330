import { Link, Navigate, Route, Routes } from 'react-router';
import AllOrgs from './all-orgs';
import Audit from './audit';
import ClientOrgs from './client-orgs';
import Marketplace from './marketplace';
import Outages from './outages';
import Settings from './settings';
import Users from './users';

/** The site admin's screens under /admin (billing and contracts are areas of their own). */
export default function AdminArea() {
  return (
    <Routes>
      <Route index element={<Navigate to="client-orgs" replace />} />
      <Route path="users" element={<Users />} />
      <Route path="orgs" element={<AllOrgs />} />
      <Route path="audit" element={<Audit />} />
      <Route path="client-orgs" element={<ClientOrgs />} />
      <Route path="outages" element={<Outages />} />
      <Route path="marketplace" element={<Marketplace />} />
      <Route path="settings" element={<Settings />} />
      <Route path="*" element={<NoSuchScreen />} />
    </Routes>
  );
}

function NoSuchScreen() {
  return (
    <section className="panel">
      <h1>Not found</h1>
      <p>
        No such admin screen. <Link to="/admin/client-orgs">Client organizations</Link>
      </p>
    </section>
  );
}
