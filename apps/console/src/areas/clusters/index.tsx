import { Link, Route, Routes, useParams } from 'react-router';
import { OrgNav } from '../../ui/org-nav';
import { HubScreen } from './hub';
import { HubsScreen } from './hubs';

/** The clusters of an organization, mounted at `/orgs/:org/clusters/*`: its hubs, then one hub's cluster sets. */
export default function ClustersArea() {
  const { org = '' } = useParams();
  return (
    <>
      <OrgNav org={org} />
      <Routes>
        <Route index element={<HubsScreen org={org} />} />
        <Route path=":cluster" element={<HubScreen org={org} />} />
        <Route
          path="*"
          element={
            <p role="alert" className="error">
              Nothing here. <Link to={`/orgs/${encodeURIComponent(org)}/clusters`}>Hub clusters</Link>
            </p>
          }
        />
      </Routes>
    </>
  );
}
