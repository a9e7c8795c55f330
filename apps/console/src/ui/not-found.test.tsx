import { screen } from '@testing-library/react';
import { renderScreen } from '../../test/render';
import { NotFound } from './not-found';

describe('a path no screen answers', () => {
  it('says so and offers the way back to the organizations', () => {
    renderScreen(<NotFound />, { path: '/nowhere', answers: {} });
    expect(screen.getByRole('heading', { name: 'Not found' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Your organizations' }).getAttribute('href')).toBe('/orgs');
  });
});
