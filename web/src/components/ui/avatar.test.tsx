import { render, screen } from '@testing-library/react';
import { Avatar, avatarFallback } from './avatar';

describe('avatarFallback', () => {
  it.each([
    [
      'the photo first',
      { photoURL: 'https://x/p.png', name: 'Ana', email: 'a@x.com' },
      { kind: 'photo', url: 'https://x/p.png' },
    ],
    [
      'else the first letter of the name',
      { photoURL: '', name: 'ana lee', email: 'z@x.com' },
      { kind: 'letter', letter: 'A' },
    ],
    [
      'else the first letter of the e-mail',
      { name: '  ', email: 'zoe@x.com' },
      { kind: 'letter', letter: 'Z' },
    ],
    ['else the generic icon', { photoURL: null, name: null, email: null }, { kind: 'icon' }],
  ])('uses %s', (_, person, want) => {
    expect(avatarFallback(person)).toEqual(want);
  });
});

describe('Avatar', () => {
  it('renders the photo, the letter or the icon', () => {
    const { container, rerender } = render(<Avatar person={{ photoURL: 'https://x/p.png' }} />);
    expect(container.querySelector('img')).toHaveAttribute('src', 'https://x/p.png');
    rerender(<Avatar size="md" person={{ photoURL: '/v0/b/b/o/avatars%2Fa.png?alt=media&token=t' }} />);
    expect(container.querySelector('img')?.getAttribute('srcset')).toMatch(
      /^\/_next\/image\?url=.+&w=48&q=75 1x, \/_next\/image\?url=.+&w=96&q=75 2x$/,
    );
    rerender(<Avatar person={{ email: 'bo@x.com' }} />);
    expect(screen.getByText('B')).toBeInTheDocument();
    rerender(<Avatar person={{}} />);
    expect(screen.getByTestId('avatar-icon')).toBeInTheDocument();
  });
});
