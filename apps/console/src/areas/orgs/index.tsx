import { Route, Routes } from 'react-router';
import { NotFound } from '../../ui/not-found';
import { Access } from './access';
import { Members } from './members';
import { OrgList } from './org-list';
import { RolePage } from './role';
import { Roles } from './roles';
import { OrgSettings } from './settings';
import { TeamPage } from './team';
import { Teams } from './teams';
import { Tokens } from './tokens';

/** The organizations area, mounted at `/orgs/*` (an org's clusters and contracts are other areas' routes). */
export default function OrgsArea() {
  return (
    <Routes>
      <Route index element={<OrgList />} />
      <Route path=":org" element={<Members />} />
      <Route path=":org/teams" element={<Teams />} />
      <Route path=":org/teams/:teamid" element={<TeamPage />} />
      <Route path=":org/roles" element={<Roles />} />
      <Route path=":org/roles/:id" element={<RolePage />} />
      <Route path=":org/tokens" element={<Tokens />} />
      <Route path=":org/access" element={<Access />} />
      <Route path=":org/settings" element={<OrgSettings />} />
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}
