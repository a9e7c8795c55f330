import { fireEvent, screen, within } from '@testing-library/react';
import { Link } from 'react-router';
import { renderScreen } from '../../test/render';
import { instant, Table, when, type Column } from '.';

interface Row {
  name: string;
  size: number;
  created: string;
}

const ROWS: Row[] = [
  { name: 'beta', size: 10, created: '2026-03-01T00:00:00Z' },
  { name: 'Alpha', size: 9, created: '2026-01-01T00:00:00Z' },
  { name: 'gamma', size: 100, created: '2026-02-01T00:00:00Z' },
  { name: 'delta', size: 2, created: '' },
  { name: 'epsilon', size: 30, created: '2026-05-01T00:00:00Z' },
  { name: 'zeta', size: 1, created: '2026-04-01T00:00:00Z' },
];

const COLUMNS: Column<Row>[] = [
  { header: 'Name', cell: (r) => <Link to={`/x/${r.name}`}>{r.name}</Link> },
  { header: 'Size', cell: (r) => r.size },
  { header: 'Created', cell: (r) => when(r.created), value: (r) => instant(r.created) },
  { header: 'Actions', cell: (r) => <button type="button">Delete {r.name}</button> },
];

const firstColumn = () =>
  within(screen.getByRole('table', { name: 'Things' }))
    .getAllByRole('row')
    .slice(1)
    .map((r) => within(r).getAllByRole('cell')[0].textContent);

describe('a table', () => {
  beforeEach(() => renderScreen(<Table caption="Things" columns={COLUMNS} rows={ROWS} rowKey={(r) => r.name} />, { answers: {} }));

  it('sorts by a column, text as people sort it and numbers as numbers, and the other way on a second click', () => {
    expect(firstColumn()).toEqual(['beta', 'Alpha', 'gamma', 'delta', 'epsilon', 'zeta']);
    fireEvent.click(screen.getByRole('button', { name: 'Name' }));
    expect(firstColumn()).toEqual(['Alpha', 'beta', 'delta', 'epsilon', 'gamma', 'zeta']);
    expect(screen.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort')).toBe('ascending');
    fireEvent.click(screen.getByRole('button', { name: 'Name' }));
    expect(firstColumn()).toEqual(['zeta', 'gamma', 'epsilon', 'delta', 'beta', 'Alpha']);
    expect(screen.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort')).toBe('descending');
    fireEvent.click(screen.getByRole('button', { name: 'Size' }));
    expect(firstColumn()).toEqual(['zeta', 'delta', 'Alpha', 'beta', 'epsilon', 'gamma']);
    expect(screen.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort')).toBeNull();
  });

  it('sorts times by the time, with a row without one last either way; the actions do not sort', () => {
    fireEvent.click(screen.getByRole('button', { name: 'Created' }));
    expect(firstColumn()).toEqual(['Alpha', 'gamma', 'beta', 'zeta', 'epsilon', 'delta']);
    fireEvent.click(screen.getByRole('button', { name: 'Created' }));
    expect(firstColumn()).toEqual(['epsilon', 'zeta', 'beta', 'gamma', 'Alpha', 'delta']);
    expect(screen.queryByRole('button', { name: 'Actions' })).toBeNull();
  });

  it('keeps the rows whose text contains the filter, any case, and says how many of all', () => {
    fireEvent.change(screen.getByRole('searchbox', { name: 'Filter Things' }), { target: { value: 'ETA' } });
    expect(firstColumn()).toEqual(['beta', 'zeta']);
    expect(screen.getByRole('status').textContent).toBe('2 of 6');
    fireEvent.change(screen.getByRole('searchbox', { name: 'Filter Things' }), { target: { value: 'nothing like it' } });
    expect(screen.getByText('No row matches “nothing like it”.')).toBeTruthy();
  });
});

describe('a short table', () => {
  it('has no filter', () => {
    renderScreen(<Table caption="Few" columns={COLUMNS} rows={ROWS.slice(0, 3)} rowKey={(r) => r.name} />, { answers: {} });
    expect(screen.getByRole('table', { name: 'Few' })).toBeTruthy();
    expect(screen.queryByRole('searchbox')).toBeNull();
  });
});
