import { Link } from 'react-router';

/** A path no screen answers: say so, and offer the way back. */
export function NotFound() {
  return (
    <section className="panel">
      <h1>Not found</h1>
      <p>
        Nothing here. <Link to="/orgs">Your organizations</Link>
      </p>
    </section>
  );
}
