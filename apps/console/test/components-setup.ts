// Each component test starts from an empty page and its own fetch stub (test/render.tsx).
import { cleanup } from '@testing-library/react';

afterEach(() => cleanup());
