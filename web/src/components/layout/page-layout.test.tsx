import { render, screen } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { PageLayout } from './page-layout';

function renderAt(path: string) {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <Routes>
        <Route element={<PageLayout actions={<button>Sign In</button>} />}>
          <Route path="*" element={<p>content</p>} />
        </Route>
      </Routes>
    </MemoryRouter>,
  );
}

describe('PageLayout', () => {
  it('shows the logo linking home and the actions in the top bar', () => {
    renderAt('/profile');
    expect(screen.getByRole('link', { name: 'Loupe' })).toHaveAttribute('href', '/');
    expect(screen.getByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(screen.getByRole('banner')).toHaveClass('sticky');
  });

  it('uses the simplified header on a gradient for every path starting with /landing', () => {
    const { container } = renderAt('/landing/mentors');
    expect(container.firstElementChild).toHaveClass('bg-gradient-to-br');
    expect(screen.getByRole('banner')).toHaveClass('bg-transparent');
  });

  it('keeps the normal header elsewhere', () => {
    const { container } = renderAt('/');
    expect(container.firstElementChild).not.toHaveClass('bg-gradient-to-br');
  });
});
