// Each component test starts from an empty page and its own fetch stub (test/render.tsx).
import { cleanup, configure } from '@testing-library/react';

// findBy* and waitFor wait up to 5 s rather than 1 s: late in a long suite on a loaded machine a page's first
// queries can take longer than a second to settle, and a wait that ends early fails a page that works.
configure({ asyncUtilTimeout: 5_000 });

afterEach(() => cleanup());
